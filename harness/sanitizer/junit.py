"""Carry the sanitizer's verdicts into the lane's JUnit file (pytest wrote it before the XML was read).

pytest names a testcase after its node id with ``/`` turned into ``.`` (a case id, or a kernel
scope with ``--coop-items group``); the item holding a case the sanitizer charged becomes a
failure, or a skip of type ``pytest.xfail`` when expectations accept all it holds, and a positive
control the sanitizer missed becomes a failure.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections import defaultdict
from pathlib import Path

from harness.expectations import Verdict
from harness.plugin import item_outcome, kernel_scope
from harness.sanitizer import SanitizerLaneError
from harness.sanitizer.judge import LaneResult
from harness.sanitizer.tools import CONTROLS

OUTCOMES = {"failure": "failures", "error": "errors", "skipped": "skipped"}


def junit_name(node_id: str) -> str:
    """The ``name`` pytest's junitxml gives an item whose node id has no ``::``."""
    return node_id.replace("/", ".")


def mark_junit(path: Path, outcomes: dict[str, tuple[str, str]]) -> int:
    """Set ``outcomes`` (node id -> (``failure`` or ``skipped``, message)); returns the testcases changed."""
    try:
        tree = ET.parse(path)
    except (OSError, ET.ParseError) as exc:
        raise SanitizerLaneError(f"{path}: cannot read the lane's JUnit file: {exc}") from None
    wanted = {junit_name(node): outcome for node, outcome in outcomes.items()}
    changed = 0
    for suite in tree.getroot().iter("testsuite"):
        for case in suite.iter("testcase"):
            if case.get("name") not in wanted:
                continue
            kind, message = wanted[case.get("name", "")]
            for old in [child for child in case if child.tag in OUTCOMES]:
                case.remove(old)
                _count(suite, OUTCOMES[old.tag], -1)
            outcome = ET.SubElement(case, kind, message=message.splitlines()[0])
            outcome.text = message
            if kind == "skipped":
                outcome.set("type", "pytest.xfail")
            _count(suite, OUTCOMES[kind], +1)
            changed += 1
    tree.write(path, encoding="utf-8", xml_declaration=True)
    return changed


def _count(suite: ET.Element, attribute: str, delta: int) -> None:
    suite.set(attribute, str(int(suite.get(attribute, "0")) + delta))


def junit_outcomes(result: LaneResult, items: str) -> dict[str, tuple[str, str]]:
    """The items (``case`` or ``group``, as ``--coop-items``) holding charged cases, judged as harness.plugin
    judges an item but from the lane's final verdicts, and a missed control (failure).

    A group is judged over all its cases, so a charge on one case cannot hide another case's failure.
    Fail-closed, as the lane is: the judge fails it on any case not accepted.
    """
    group = items == "group"
    charged = {kernel_scope(case) if group else case for case in result.charged}
    held: defaultdict[str, list[Verdict]] = defaultdict(list)
    for case, final in result.finals.items() if charged else ():
        node = kernel_scope(case) if group else case
        if node in charged:
            held[node].append(final)
    outcomes = {}
    for node, verdicts in held.items():
        outcome, message = item_outcome(verdicts, group, fail_closed=True)
        outcomes[node] = ("skipped" if outcome == "xfailed" else "failure", message)
    control = CONTROLS[result.tool]
    if not result.control_reported:
        outcomes[control.id] = ("failure", f"{control.tool} did not report the planted bug: {control.plants}")
    return outcomes
