"""Item 9: ``verify`` recomputes everything junit.xml states (totals, properties, every result) from the
bundled journals and refuses any difference; a junit.xml that does not parse never verifies."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

import pytest

from harness.report.bundle import SUMS, verify_bundle, write_bundle
from harness.statuses import Status
from tests.report.journals import case_id, write_journal


def rehash(root: Path) -> None:
    """Re-index after tampering, as a careful forger would."""
    files = sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file() and p.name != SUMS)
    (root / SUMS).write_text("".join(f"{hashlib.sha256((root / f).read_bytes()).hexdigest()}  {f}\n" for f in files))


def _bundle(tmp_path: Path, detail: str = "out[0]=1") -> Path:
    journal = write_journal(tmp_path / "gpu.jsonl", "gpu", [(case_id("numba"), Status.PASS),
                                                            (case_id("numba", valid="partial"), Status.FAIL, detail)])
    path = tmp_path / "bundle"
    write_bundle(path, [journal])
    assert verify_bundle(path) == []
    return path


#: (what a forger changes in junit.xml, the difference verify names)
EDITS = {
    "suite failures": (r'(<testsuite [^>]*)failures="1"', r'\1failures="0"',
                       "testsuites/testsuite[gpu] attribute failures is '0', but the journals give '1'"),
    "total tests": (r'<testsuites tests="2"', '<testsuites tests="1"',
                    "testsuites attribute tests is '1', but the journals give '2'"),
    "a property": (r'name="seed" value="7"', 'name="seed" value="8"',
                   "testsuites/testsuite[gpu]/properties/property[seed] attribute value is '8', but the journals "
                   "give '7'"),
    "a case's time": (r'(classname="block.load/numba" time=")0.0', r"\g<1>0.25",
                      "attribute time is '0.25', but the journals give '0.0'"),
}


@pytest.mark.parametrize(("pattern", "replacement", "named"), EDITS.values(), ids=EDITS)
def test_a_junit_total_edited_and_rehashed_does_not_verify(pattern: str, replacement: str, named: str,
                                                           tmp_path: Path) -> None:
    path = _bundle(tmp_path)
    junit = path / "junit.xml"
    edited = re.sub(pattern, replacement, junit.read_text(), count=1)
    assert edited != junit.read_text()
    junit.write_text(edited)
    rehash(path)
    problems = verify_bundle(path)
    assert len(problems) == 1 and problems[0].startswith("junit.xml: not the JUnit rendering of the journals: ")
    assert named in problems[0]


def test_an_unparseable_junit_never_verifies(tmp_path: Path) -> None:
    """Even where the journals hold characters XML cannot carry (once, the rebuilt file did not parse either)."""
    path = _bundle(tmp_path, detail="out[0]=\x00")
    (path / "junit.xml").write_text("anything at all")
    rehash(path)
    assert verify_bundle(path) == ["junit.xml: not well-formed XML: syntax error: line 1, column 0"]


def test_a_junit_declaring_entities_is_refused_unread(tmp_path: Path) -> None:
    path = _bundle(tmp_path)
    junit = path / "junit.xml"
    lol = '<!DOCTYPE t [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">]>'
    junit.write_text(junit.read_text().replace("?>", "?>" + lol, 1))
    rehash(path)
    assert verify_bundle(path) == ["junit.xml: declares a DOCTYPE: the JUnit rendering of journals has none"]
