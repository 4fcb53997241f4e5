"""Item 5: ``--resume`` continues only a journal of the same session, or refuses listing the differences;
``--journal`` never continues an existing journal."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from harness.cli import main
from harness.session import TOOLKIT_ENV
from tests.faults.conftest import Refused
from tests.faults.runs import recorded


@pytest.fixture
def journal(lane: list[str], tmp_path: Path) -> Path:
    """A finished journal of the suite's lane."""
    path = tmp_path / "lane.jsonl"
    assert main(["run", *lane, "--journal", str(path), "--no-isolate"]) == 0
    return path


@pytest.mark.usefixtures("model_backend")
def test_journal_naming_an_existing_journal_is_refused(journal: Path, lane: list[str], refused: Refused) -> None:
    before = journal.read_bytes()
    err = refused(["run", *lane, "--journal", str(journal), "--no-isolate"], [str(journal)])
    assert err == f"error: --journal {journal}: already exists: continue it with --resume {journal}, or name " \
                  "a new journal\n"
    assert journal.read_bytes() == before


def _edit_contract(folder: Path, journal: Path) -> None:
    path = folder / "block_load.toml"
    path.write_text(path.read_text() + "# an edit after the run started\n")


def _edit_expectations(folder: Path, journal: Path) -> None:
    (folder / "expectations.toml").write_text("schema = 1\n# an edit after the run started\n")


def _edit_journal_backends(folder: Path, journal: Path) -> None:
    journal.write_text(journal.read_text().replace('"backends":["model"]', '"backends":["model","numba"]', 1))


#: id -> (options of the resume, an edit made before it, what the refusal must list)
OTHER_SESSIONS: dict[str, tuple[list[str], Callable[[Path, Path], None] | None, list[str]]] = {
    "lane": (["--lane", "host"], None, ["lane: journal 'simulator', this run 'host'"]),
    "seed": (["--seed", "5"], None, ["seed: journal 20261129, this run 5"]),
    "profile": (["--profile", "pr"], None, ["profile: journal 'full', this run 'pr'"]),
    "arch": (["--arch", "sm_100"], None, ["arch: journal 'sm_90', this run 'sm_100'"]),
    "max-blocks": (["--max-blocks", "8"], None, ["max_blocks: journal 4096, this run 8"]),
    "two at once": (["--seed", "5", "--max-blocks", "8"], None,
                    ["seed: journal 20261129, this run 5", "max_blocks: journal 4096, this run 8"]),
    "contracts": ([], _edit_contract, ["contracts_sha256: journal '"]),
    "expectations": ([], _edit_expectations, ["expectations_sha256: journal '"]),
    "backends": ([], _edit_journal_backends, ["backends: journal ('model', 'numba'), this run ('model',)"]),
}


@pytest.mark.usefixtures("model_backend")
@pytest.mark.parametrize(("options", "edit", "listed"), OTHER_SESSIONS.values(), ids=OTHER_SESSIONS)
def test_a_resume_of_another_session_is_refused_listing_the_differences(
        options: list[str], edit: Callable[[Path, Path], None] | None, listed: list[str], journal: Path,
        lane: list[str], small_contracts: Path, refused: Refused) -> None:
    if edit is not None:
        edit(small_contracts, journal)
    before = recorded(journal)
    err = refused(["run", *lane, *options, "--resume", str(journal), "--no-isolate"], [str(journal), *listed])
    assert "is another session's journal" in err
    assert recorded(journal) == before


@pytest.mark.usefixtures("model_backend")
def test_a_resume_under_another_toolkit_is_refused(journal: Path, lane: list[str], refused: Refused,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(TOOLKIT_ENV, "cuda-12.9")
    refused(["run", *lane, "--resume", str(journal), "--no-isolate"], ["toolkit: journal '', this run 'cuda-12.9'"])


@pytest.mark.usefixtures("model_backend")
def test_one_shard_of_a_sharded_run_does_not_resume_alone(lane: list[str], tmp_path: Path, refused: Refused) -> None:
    assert main(["run", *lane, "--journal", str(tmp_path / "lane.jsonl"), "--jobs", "2"]) == 0
    shard = tmp_path / "lane.shard1of2.jsonl"
    before = recorded(shard)
    refused(["run", *lane, "--resume", str(shard), "--no-isolate"], [str(shard), "shard: journal 1/2, this run 1/1"])
    assert recorded(shard) == before


@pytest.mark.usefixtures("model_backend")
def test_a_resume_of_the_same_session_adds_nothing_to_a_finished_journal(journal: Path, lane: list[str]) -> None:
    before = recorded(journal)
    assert main(["run", *lane, "--resume", str(journal), "--no-isolate"]) == 0
    assert recorded(journal) == before
