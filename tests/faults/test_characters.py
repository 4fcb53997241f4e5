"""Item 8: every report format carries any text a journal holds: what a format cannot carry (control
characters, lone surrogates) is shown escaped and counted, and Markdown never reads a detail as markup."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from harness.report.cli import main
from harness.report.render import md_text
from harness.statuses import Status
from tests.report.journals import case_id, write_journal

#: detail in the journal -> how every report shows it, and how many characters were replaced
DETAILS = {
    "nul": ("out[0]=\x00", "out[0]=\\x00", 1),
    "escape sequence": ("\x1b[31mred\x1b[0m", "\\x1b[31mred\\x1b[0m", 2),
    "lone surrogate": ("name \udcff.bin", "name \\udcff.bin", 1),
    "C1 control": ("a\x9bb", "a\\x9bb", 1),
}


@pytest.fixture
def report(tmp_path: Path, request: pytest.FixtureRequest) -> Path:
    detail = request.param
    journal = write_journal(tmp_path / "j.jsonl", "gpu", [(case_id("numba"), Status.FAIL, detail)])
    out = tmp_path / "report"
    assert main(["report", str(journal), "--out", str(out), "--no-expectations"]) == 1  # not qualified
    return out


@pytest.mark.parametrize(("report", "shown", "replaced"), DETAILS.values(), ids=DETAILS, indirect=["report"])
def test_every_format_shows_what_it_cannot_carry_escaped_and_says_so(report: Path, shown: str, replaced: int) -> None:
    files = {name: (report / name).read_text(encoding="utf-8") for name in
             ("report.md", "report.html", "report.json", "junit.xml")}
    doc = json.loads(files["report.json"])
    assert doc["non_pass"][0]["detail"] == shown
    assert doc["summary"]["replaced"] == replaced
    note = f"{replaced} character(s) that a report cannot carry (control characters, lone surrogates)"
    assert note in files["report.md"] and note in files["report.html"]
    assert md_text(shown) in files["report.md"] and shown in files["report.html"]
    suite = ET.fromstring(files["junit.xml"]).find("testsuite")
    assert suite is not None
    failure = suite.find("testcase/failure")
    assert failure is not None and failure.get("message") == shown and failure.text == shown
    properties = {p.get("name"): p.get("value") for p in suite.iter("property")}
    assert properties["replaced"].startswith(note)


@pytest.mark.parametrize("report", ["# Qualified: yes", "- every case passed", "1. all good", "=====",
                                    "    indented like code"], indirect=True)
def test_markdown_never_reads_a_detail_as_markup(report: Path) -> None:
    """A detail follows its case in one list item: a heading, list or code marker there is escaped."""
    md = (report / "report.md").read_text(encoding="utf-8")
    item = md.split("First cases:\n\n", 1)[1].split("\n", 1)[0]
    assert item.startswith(f"- {md_text(case_id('numba'))}: "), item
    detail = item.removeprefix(f"- {md_text(case_id('numba'))}: ")
    assert not BLOCK_START.match(detail), detail


#: How a CommonMark line opens a block other than a paragraph: an ATX heading, a list item, a setext
#: underline or thematic break, an indented code block.
BLOCK_START = re.compile(r"#{1,6}(\s|$)|[-+*](\s|$)|\d{1,9}[.)](\s|$)|[=-]+\s*$| {4}")
