"""Writes one qualification's report files: report.md, report.html, report.json and junit.xml."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

from harness.report import document
from harness.report.document import Inputs
from harness.report.junit import write_junit
from harness.report.render import render_html, render_json, render_markdown

FILES = ("report.md", "report.html", "report.json", "junit.xml")


def write_report(inputs: Inputs, out: Path, generated: dt.datetime | None = None) -> dict[str, Any]:
    """Write the report files into ``out`` (created) and return the report document."""
    generated = generated or dt.datetime.now(dt.UTC)
    loaded = document.load(inputs, generated.date())
    doc = document.build(inputs, generated, loaded)
    out.mkdir(parents=True, exist_ok=True)
    (out / "report.md").write_text(render_markdown(doc), encoding="utf-8")
    (out / "report.html").write_text(render_html(doc), encoding="utf-8")
    (out / "report.json").write_text(render_json(doc), encoding="utf-8")
    write_junit(loaded[0], out / "junit.xml")
    return doc
