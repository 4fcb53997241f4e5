"""The nightly matrix file: expansion, exclusions (stale ones refused), validation naming file and key."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.report.errors import ReportError
from harness.report.matrix import load_matrix

ROOT = Path(__file__).resolve().parents[2]
SMALL = """schema = 1
command = ["tox", "-e", "{tox_env}", "--out", "{out}", "--python", "{python}"]
timeout_s = 60
[axes]
python = [{ name = "3.11", needs = ["python:3.11"] }, { name = "3.12", needs = ["python:3.12"] }]
numpy = [{ name = "1.26", env = { SPEC = "numpy<2" } }, { name = "2.x", env = { SPEC = "numpy>=2" } }]
lane = [
    { name = "host", vars = { tox_env = "host" } },
    { name = "gpu-memcheck", vars = { tox_env = "gpu-memcheck" }, needs = ["gpu", "on-path:compute-sanitizer"] },
]
"""


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "nightly.toml"
    path.write_text(text)
    return path


def test_every_combination_in_axis_order(tmp_path: Path) -> None:
    kept, dropped = load_matrix(write(tmp_path, SMALL)).expand()
    assert [c.id for c in kept][:3] == ["python=3.11,numpy=1.26,lane=host", "python=3.11,numpy=1.26,lane=gpu-memcheck",
                                        "python=3.11,numpy=2.x,lane=host"]
    assert len(kept) == 8 and dropped == []
    combo = kept[1]
    assert combo.values == {"python": "3.11", "numpy": "1.26", "lane": "gpu-memcheck"}
    assert combo.env == {"SPEC": "numpy<2"}
    assert combo.needs == ("python:3.11", "gpu", "on-path:compute-sanitizer")
    assert combo.placeholders("o", "e", "c") == {"python": "3.11", "numpy": "1.26", "lane": "gpu-memcheck",
                                                 "tox_env": "gpu-memcheck", "id": combo.id, "out": "o", "env": "e",
                                                 "contracts": "c"}
    assert combo.slug == "python-3.11_numpy-1.26_lane-gpu-memcheck"


def test_exclusions_drop_matching_combinations_with_their_reason(tmp_path: Path) -> None:
    text = SMALL + """
[[exclude]]
where = { lane = "gpu-memcheck", python = ["3.11"] }
reason = "sanitizer on the newest interpreter only"
[[exclude]]
where = { numpy = "1.26", lane = ["host", "gpu-memcheck"] }
reason = "old numpy: host only... not even"
"""
    kept, dropped = load_matrix(write(tmp_path, text)).expand()
    assert [c.id for c in kept] == ["python=3.11,numpy=2.x,lane=host", "python=3.12,numpy=2.x,lane=host",
                                    "python=3.12,numpy=2.x,lane=gpu-memcheck"]
    assert [(c.id, why) for c, why in dropped][:2] == [
        ("python=3.11,numpy=1.26,lane=host", "old numpy: host only... not even"),
        ("python=3.11,numpy=1.26,lane=gpu-memcheck", "sanitizer on the newest interpreter only")]


def test_the_shipped_matrix_changes_one_toolchain_package_at_a_time() -> None:
    """Racecheck on the default toolchain and on each one-package change; full on the default only, without
    cccl (its NVRTC compiles of the full profile take hours); cccl under racecheck where its compiler changes:
    the default toolchain and the older numba-cuda."""
    matrix = load_matrix(ROOT / "contracts" / "nightly.toml")
    kept, dropped = matrix.expand()
    default = "python=3.12,numba_cuda=0.30.4,cutlass_dsl=4.8.1,cuda_bindings=13.3.1,numpy=2.4"
    changed = [default.replace(*change) for change in (("0.30.4", "0.30.1"), ("4.8.1", "4.8.0"),
                                                        ("13.3.1", "13.0.3"), ("numpy=2.4", "numpy=2.3"))]
    by_id = {c.id: c for c in kept}
    expected = [f"{t},cccl=1.1.1,lane=gpu-racecheck" for t in (default, changed[0])] + [
        f"{t},cccl=none,lane=gpu-racecheck" for t in changed[1:]] + [f"{default},cccl=none,lane=gpu-full"]
    assert sorted(by_id) == sorted(expected)
    assert len(dropped) == 64 - 6
    racecheck = by_id[f"{changed[0]},cccl=1.1.1,lane=gpu-racecheck"]
    assert racecheck.requires == (
        "numba-cuda==0.30.1", "numba==0.65.1", "cuda-core>=0.5.1,<1",
        *(f"nvidia-cutlass-dsl{part}==4.8.1" for part in ("", "-libs-base", "-libs-core", "-libs-cu13")),
        "cuda-bindings==13.3.1", "numpy>=2.4,<2.5", "cuda-cccl==1.1.1", "pytest>=8", "pytest-xdist>=3.6")
    assert racecheck.no_deps == racecheck.requires[3:7]
    assert "cuda.coop._experimental" in racecheck.imports
    assert racecheck.command[:6] == ("{env}/bin/python", "-P", "-m", "harness.sanitizer", "lane", "--tool")
    full = by_id[f"{default},cccl=none,lane=gpu-full"]
    assert full.env == {"COOP_BLOCK_BACKENDS": "cccl"} and "cuda-cccl==1.1.1" not in full.requires
    # Every lane has a hang limit of its own, below the one the matrix sets for a lane whose values set none.
    assert all(c.timeout_s is not None and c.timeout_s < matrix.timeout_s for c in kept)


def test_a_values_timeout_and_no_deps_reach_its_combinations(tmp_path: Path) -> None:
    """A combination's limit is the smallest its values set (else None: the matrix's); the pins of a value
    marked no_deps are installed without their requirements."""
    text = SMALL.replace('{ name = "1.26", env', '{ name = "1.26", no_deps = true, requires = ["numpy==1.26.4"], env')
    text = text.replace('vars = { tox_env = "gpu-memcheck" },', 'vars = { tox_env = "gpu-memcheck" }, timeout_s = 30,')
    text = text.replace('needs = ["python:3.12"] }', 'needs = ["python:3.12"], timeout_s = 45.5 }')
    by_id = {c.id: c for c in load_matrix(write(tmp_path, text)).expand()[0]}
    assert by_id["python=3.11,numpy=1.26,lane=host"].timeout_s is None
    assert by_id["python=3.12,numpy=2.x,lane=host"].timeout_s == 45.5
    assert by_id["python=3.12,numpy=2.x,lane=gpu-memcheck"].timeout_s == 30
    assert by_id["python=3.11,numpy=1.26,lane=host"].no_deps == ("numpy==1.26.4",)
    assert by_id["python=3.11,numpy=1.26,lane=host"].requires == ("numpy==1.26.4",)
    assert by_id["python=3.11,numpy=2.x,lane=host"].no_deps == ()


@pytest.mark.parametrize(("change", "message"), [
    (("schema = 1", "schema = 2"), r"schema: expected 1"),
    (('lane = [', 'out = [{ name = "x" }]\nlane = ['), r"axes.out: an axis name is"),
    (('name = "host",', 'name = "host lane",'), r"axes.lane\[0\].name: 'host lane' may hold only"),
    (('name = "host",', 'name = "host", needs = ["cuda"],'), r"axes.lane\[0\].needs\[0\]: 'cuda' is not gpu"),
    (('name = "host",', 'name = "host", env = { SPEC = "x" },'), r"axes.lane: env SPEC is also set by axis numpy"),
    (('vars = { tox_env = "host" }', 'vars = { tox = "host" }'), r"axes.lane: every value must set the same vars"),
    (('{ tox_env = "gpu-memcheck" }', '{ tox_env = 3 }'), r"axes.lane\[1\].vars: expected a table of strings"),
    (('"3.12", needs', '"3.11", needs'), r"axes.python: value names repeat"),
    (('"--python", "{python}"', '"{cuda}"'),
     r"command: unknown placeholder\(s\) \{cuda\}; known: \{contracts\}, \{env\}, \{id\}, \{lane\}"),
    (("timeout_s = 60", "timeout_s = 0"), r"timeout_s: expected a positive number"),
    (("timeout_s = 60", "timeout_s = 60\nretries = 2"), r"\(top level\): unknown keys \['retries'\]"),
    (('name = "host",', 'name = "host", timeout_s = 0,'), r"axes.lane\[0\].timeout_s: expected a positive number"),
    (('name = "host",', 'name = "host", timeout_s = true,'), r"axes.lane\[0\].timeout_s: expected a positive"),
    (('name = "host",', 'name = "host", no_deps = "yes",'), r"axes.lane\[0\].no_deps: expected true or false"),
])
def test_a_malformed_matrix_is_named(tmp_path: Path, change: tuple[str, str], message: str) -> None:
    assert change[0] in SMALL
    with pytest.raises(ReportError, match=f"nightly.toml: {message}"):
        load_matrix(write(tmp_path, SMALL.replace(*change, 1)))


def test_a_var_named_like_an_axis_is_refused(tmp_path: Path) -> None:
    text = SMALL.replace("tox_env", "python")
    with pytest.raises(ReportError, match=r"axes.lane: a var may not be named like an axis, id or out"):
        load_matrix(write(tmp_path, text))


@pytest.mark.parametrize(("exclude", "message"), [
    ('where = { cuda = "12" }\nreason = "x"', r"exclude\[0\].where.cuda: not an axis; axes: python, numpy, lane"),
    ('where = { numpy = "3.0" }\nreason = "x"', r"exclude\[0\].where.numpy: \['3.0'\] not among the values"),  # stale
    ('where = { numpy = "2.x" }\nreason = " "', r"exclude\[0\].reason: say why"),
    ('where = {}\nreason = "x"', r"exclude\[0\].where: an empty where would exclude everything"),
])
def test_a_malformed_exclusion_is_named(tmp_path: Path, exclude: str, message: str) -> None:
    with pytest.raises(ReportError, match=f"nightly.toml: {message}"):
        load_matrix(write(tmp_path, f"{SMALL}\n[[exclude]]\n{exclude}\n"))
