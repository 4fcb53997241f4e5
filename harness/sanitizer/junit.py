"""Carry the sanitizer's verdicts into the lane's JUnit file (pytest wrote it before the XML was read).

pytest names a testcase after its node id with ``/`` turned into ``.`` (the case id here); a
case the sanitizer charged becomes a failure, or a skip of type ``pytest.xfail`` when an
expectation waived it, and a positive control the sanitizer missed becomes a failure.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

from harness.sanitizer import SanitizerLaneError

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
