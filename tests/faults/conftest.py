"""Fixtures of the fault suite: the lane's options, child runs that never outlive a test, and the check that a bad
input is refused with one line."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from harness.cli import main
from tests.faults import figures
from tests.faults.runs import Children, lane_options

Refused = Callable[[list[str], list[str]], str]


@pytest.fixture
def children(tmp_path: Path) -> Iterator[Children]:
    folder = tmp_path / "children"
    folder.mkdir()
    found = Children(folder)
    yield found
    found.close()


@pytest.fixture
def lane(small_contracts: Path) -> list[str]:
    """``run`` options of the suite's lane (the model backend, registered by ``model_backend``)."""
    return lane_options(small_contracts)


@pytest.fixture
def refused(capsys: pytest.CaptureFixture[str], request: pytest.FixtureRequest) -> Refused:
    """``refused(argv, names)``: the CLI must exit 2 printing one line that holds every one of ``names`` (counted
    as a bad input tried, and refused or not); returns the line."""

    def check(argv: list[str], names: list[str]) -> str:
        capsys.readouterr()
        try:
            code = main(argv)
        except Exception:  # a traceback: counted, then shown as the test's failure
            figures.add(request.node, bad_inputs=1, bad_inputs_refused=0)
            raise
        err = capsys.readouterr().err
        ok = code == 2 and err.count("\n") == 1 and all(name in err for name in names)
        figures.add(request.node, bad_inputs=1, bad_inputs_refused=int(ok))
        assert (code, err.count("\n")) == (2, 1), err
        assert all(name in err for name in names), err
        return err

    return check
