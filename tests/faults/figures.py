"""The fault suite's figures: each test adds its counts to its reports' user properties, and the session
totals them and prints them at its end (under xdist too: reports carry their properties to the controller).

The figures are what the issue's done criterion asks for: faults injected and survived, kills survived,
verdicts lost or wrong, duplicate records, and bad inputs refused with a one-line message.
"""

from __future__ import annotations

from collections import Counter

import pytest

PREFIX = "faults."
FAULT_KINDS = ("crash", "hang", "raise", "corrupt")
KILL_POINTS = ("run", "worker", "report", "bundle")


def add(item: pytest.Item, **counts: int) -> None:
    """Count ``counts`` (figure name -> number) for ``item``'s test; they reach the summary even if it fails."""
    item.user_properties += [(PREFIX + name, number) for name, number in counts.items()]


class Figures:
    """Totals the figures of every test report and writes them into the terminal summary."""

    def __init__(self) -> None:
        self.totals: Counter[str] = Counter()

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.when != "call":
            return
        for name, number in report.user_properties:
            if isinstance(name, str) and name.startswith(PREFIX):
                self.totals[name.removeprefix(PREFIX)] += int(number)

    def pytest_terminal_summary(self, terminalreporter: pytest.TerminalReporter) -> None:
        t = self.totals
        if not t:
            return
        write = terminalreporter.write_line
        terminalreporter.write_sep("-", "fault sweep")
        if t["faults"] or t["kills"]:
            kinds = ", ".join(f"{kind} {t['faults.' + kind]}" for kind in FAULT_KINDS)
            points = ", ".join(f"{point} {t['kills.' + point]}" for point in KILL_POINTS)
            write(f"faults injected: {t['faults']} ({kinds}); survived: {t['faults_survived']}; "
                  f"pre-empted by a kill: {t['faults_preempted']}")
            write(f"kills: {t['kills']} ({points}); survived: {t['kills_survived']}")
            write(f"cases checked: {t['cases']}; verdicts lost: {t['lost']}; wrong: {t['wrong']}; "
                  f"duplicate records: {t['duplicates']}")
        if t["bad_inputs"]:
            write(f"bad inputs tried: {t['bad_inputs']}; refused with one line naming the file, key or option "
                  f"(no traceback): {t['bad_inputs_refused']}")
