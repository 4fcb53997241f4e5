"""Fixtures of the mutation self-test and its end-of-session summary (one line per mutant)."""

from __future__ import annotations

import json
import os

import pytest

from harness.contracts import load_contracts

from .exchange_mutants import EXCHANGE
from .mutants import BOTH
from .reduce_mutants import REDUCE
from .runs import Plan, plan
from .scan_model import SCAN
from .shuffle_mutants import SHUFFLE
from .warp_model import WARP_REDUCE, WARP_SCAN

#: The contracts the self-test has a reference model of.
MODELLED = BOTH + EXCHANGE + SHUFFLE + REDUCE + SCAN + WARP_REDUCE + WARP_SCAN


@pytest.fixture(scope="session")
def pr_plans() -> dict[str, Plan]:
    """The pr profile of every modelled contract, inputs built once per session (per xdist worker)."""
    contracts = {c.id: c for c in load_contracts()}
    missing = [cid for cid in MODELLED if cid not in contracts]
    if missing:
        raise LookupError(f"the mutation self-test models {', '.join(MODELLED)}; "
                          f"the contracts lack {', '.join(missing)}")
    return {cid: plan(contracts[cid], "pr") for cid in MODELLED}


class MutationSummary:
    """Collects each mutant test's verdict from its report (so it works under xdist) and prints them last."""

    def __init__(self) -> None:
        self.verdicts: dict[str, tuple[bool, str]] = {}

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        props = {key: str(value) for key, value in report.user_properties}
        if report.when == "call" and "mutant" in props:
            self.verdicts[props["mutant"]] = (props["caught"] == "yes", props["verdict"])

    def pytest_terminal_summary(self, terminalreporter: pytest.TerminalReporter) -> None:
        if not self.verdicts:
            return
        caught = sum(ok for ok, _ in self.verdicts.values())
        terminalreporter.write_sep("-", f"mutation self-test: {caught}/{len(self.verdicts)} mutants caught")
        for name, (_, verdict) in sorted(self.verdicts.items()):
            terminalreporter.write_line(f"{name}: {verdict}")


def pytest_configure(config: pytest.Config) -> None:
    config.pluginmanager.register(MutationSummary(), "selftest-mutation-summary")


def pytest_sessionfinish(session: pytest.Session) -> None:
    """In record mode, gather the mutants' verdict digests (one part file per test, from any xdist worker)
    into the pinned file; the controller (or the only process) does it once every worker is done."""
    from .test_mutants import PINNED, RECORD_ENV

    if not os.environ.get(RECORD_ENV) or hasattr(session.config, "workerinput"):
        return
    parts = sorted(PINNED.parent.glob(f"{PINNED.stem}.*.part"))
    merged = {p.name[len(PINNED.stem) + 1:-len(".part")]: json.loads(p.read_text(encoding="utf-8")) for p in parts}
    if merged:
        PINNED.write_text(json.dumps(merged, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    for p in parts:
        p.unlink()
