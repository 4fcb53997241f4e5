"""Writes one qualification's report files, report.md, report.html, report.json and junit.xml, as one folder
that replaces an older report whole (:mod:`harness.report.folders`)."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

from harness.report import document
from harness.report.document import Inputs
from harness.report.errors import ReportError
from harness.report.folders import swapped_in
from harness.report.junit import write_junit
from harness.report.render import render_html, render_json, render_markdown

FILES = ("report.md", "report.html", "report.json", "junit.xml")


def write_report(inputs: Inputs, out: Path, generated: dt.datetime | None = None) -> dict[str, Any]:
    """Write the report files as the folder ``out``, replacing an older report there whole, and return the report
    document. A folder holding other files is never replaced: they would go with it."""
    if out.exists() and not out.is_dir():
        raise ReportError(f"--out {out}: is a file; a report is written as a folder")
    others = sorted(p.name for p in out.iterdir() if p.name not in FILES) if out.is_dir() else []
    if others:
        raise ReportError(f"--out {out}: holds files other than a report's ({', '.join(others[:5])}): a report "
                          "replaces its folder whole, so name a folder of its own")
    with swapped_in(out) as folder:
        return write_files(inputs, folder, generated)


def write_files(inputs: Inputs, folder: Path, generated: dt.datetime | None = None) -> dict[str, Any]:
    """Write the report files into ``folder`` (one that is being built) and return the report document."""
    generated = generated or dt.datetime.now(dt.UTC)
    loaded = document.load(inputs, generated.date())
    doc = document.build(inputs, generated, loaded)
    (folder / "report.md").write_text(render_markdown(doc), encoding="utf-8")
    (folder / "report.html").write_text(render_html(doc), encoding="utf-8")
    (folder / "report.json").write_text(render_json(doc), encoding="utf-8")
    write_junit(loaded[0], folder / "junit.xml")
    return doc
