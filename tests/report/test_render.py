"""Rendering: every value escaped (HTML and Markdown), the heat map present, no external asset."""

from __future__ import annotations

import datetime as dt
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from harness.journal import CaseRecord
from harness.report.document import Inputs, Source, build
from harness.report.render import heat, md_text, render_html, render_json, render_markdown
from harness.statuses import Status
from tests.report.dom import Elements
from tests.report.journals import MANIFEST, SCRIPT, case_id

WHEN = dt.datetime(2026, 3, 1, tzinfo=dt.UTC)


@pytest.fixture
def doc(qualification: list[Path]) -> dict[str, Any]:
    return build(Inputs([Source.of(p) for p in qualification]), WHEN)


def test_html_shows_a_script_in_a_detail_as_text(doc: dict[str, Any]) -> None:
    html = render_html(doc)
    parsed = Elements(html)
    assert [tag for tag, _ in parsed.tags if tag == "script"] == []
    assert SCRIPT in "".join(parsed.text)  # the detail survives, as text
    assert "&lt;script&gt;" in html


def test_html_escapes_attribute_values(doc: dict[str, Any]) -> None:
    doc["lanes"][0]["name"] = 'host" onmouseover="alert(1)'
    doc["counts"]["lanes"] = {doc["lanes"][0]["name"]: doc["counts"]["lanes"]["host"]}
    doc["lanes"] = doc["lanes"][:1]
    doc["non_pass"] = []
    attrs = [a for _, a in Elements(render_html(doc)).tags]
    assert not any("onmouseover" in a for a in attrs)
    assert {"data-lane": 'host" onmouseover="alert(1)'} in attrs


def test_html_is_self_contained(doc: dict[str, Any]) -> None:
    html = render_html(doc)
    assert not re.search(r"""(src|href)\s*=|@import|url\(""", html)
    assert "default-src 'none'" in html  # and the page forbids loading anything, scripts included


def test_html_heat_map_has_a_cell_per_contract_and_backend(doc: dict[str, Any]) -> None:
    cells = [a for tag, a in Elements(render_html(doc)).tags if tag == "div" and "data-backend" in a]
    assert len(cells) == 2 * 3
    cutlass = next(a for a in cells if a["data-contract"] == "block.load" and a["data-backend"] == "cutlass")
    assert (cutlass["data-passed"], cutlass["data-total"]) == ("3", "4")
    assert f"background: {heat(0.75)}" in (cutlass["style"] or "")
    empty = next(a for a in cells if a["data-contract"] == "wheel.install" and a["data-backend"] == "rustfatbin")
    assert "none" in (empty["class"] or "")


def test_heat_runs_from_red_to_green() -> None:
    assert (heat(0.0), heat(1.0)) == ("hsl(0 65% 38%)", "hsl(120 65% 38%)")


@pytest.mark.parametrize(("raw", "shown"), [
    ("a|b", r"a\|b"),
    ("<script>x</script>", r"\<script\>x\</script\>"),
    ("warp_transpose *bold* `code` [link](x)", r"warp\_transpose \*bold\* \`code\` \[link\](x)"),
    ("one\ntwo", "one<br>two"),
    ("back\\slash &amp;", r"back\\slash \&amp;"),
])
def test_md_text_escapes_markdown_and_html(raw: str, shown: str) -> None:
    assert md_text(raw) == shown


def test_markdown_keeps_a_detail_inside_its_table_and_escaped(doc: dict[str, Any]) -> None:
    text = render_markdown(doc)
    assert "<script>" not in text
    assert r"\<script\>" in text
    table = [line for line in text.splitlines() if line.startswith("| cutlass GPU checks |")]
    assert table == ["| cutlass GPU checks | 2 | 1 | 1 | 0 | 1 |"]  # Pass, NotSupported, Fail columns


def test_markdown_and_html_show_the_summary_and_the_pass_rate_table(doc: dict[str, Any]) -> None:
    text = render_markdown(doc)
    assert doc["summary"]["passed"] in text
    assert "| block.load | 100.0% (4/4) | 75.0% (3/4) | 75.0% (3/4) |" in text
    assert "| wheel.install | 100.0% (1/1) | 100.0% (1/1) | no checks |" in text
    assert doc["summary"]["passed"] in render_html(doc)


def test_json_round_trips(doc: dict[str, Any]) -> None:
    assert json.loads(render_json(doc)) == doc


def test_the_wheel_manifest_renders_one_table_row_per_wheel(qualification: list[Path], tmp_path: Path) -> None:
    path = tmp_path / "manifest.json"
    path.write_text(json.dumps(MANIFEST))
    doc = build(Inputs([Source.of(p) for p in qualification], manifest=Source.of(path)), WHEN)
    lines = render_markdown(doc).splitlines()
    assert "| coopcheck-numba | 0.1.0 | b8b8b92cdc34 | none |  | setuptools (80.9.0) |" in lines
    native = "| coopcheck-rustfatbin | 0.1.0 | b0658c68345e | coopcheck\\_rustfatbin/data/"
    assert any(line.startswith(native) for line in lines)
    rows = [a for tag, a in Elements(render_html(doc)).tags if tag == "tr" and "data-wheel" in a]
    assert [a["data-wheel"] for a in rows] == ["coopcheck-numba", "coopcheck-rustfatbin"]


def test_failures_are_grouped_by_rule_and_kernel_point_with_a_few_examples(journal: Callable[..., Path]) -> None:
    """One bug failing many cases of a kernel point is one section, not one per case: each differs in detail."""
    wide = [(case_id("numba", valid=f"v{i}"), Status.FAIL, f"out[{i}]=5, but should be {i}") for i in range(6)]
    other_rule = (case_id("numba", valid="v9"), Status.FAIL, "out[0]=1, but should be 0")
    other_kernel = [(case_id("numba", dtype="uint8", valid=f"v{i}"), Status.FAIL, "out[1]=0") for i in range(2)]
    records = [CaseRecord(i, s, "gpu", d, ("valid-prefix",)) for i, s, d in [*wide, *other_kernel]]
    records.append(CaseRecord(*other_rule[:2], "gpu", other_rule[2], ("offset",)))
    doc = build(Inputs([Source.of(journal("gpu", records))]), WHEN)
    dom = Elements(render_html(doc))
    sections = [(a["data-rules"], a["data-cases"], a["data-kernels"]) for tag, a in dom.tags
                if tag == "section" and a.get("class") == "non-pass"]
    assert sections == [("offset", "1", "1"), ("valid-prefix", "8", "2")]
    int32, uint8 = (case_id("numba", "compile", dtype=d) for d in ("int32", "uint8"))
    assert [a["data-kernel"] for tag, a in dom.tags if tag == "tr" and "data-kernel" in a] == [int32, int32, uint8]
    examples = [a["data-case"] for tag, a in dom.tags if tag == "li" and "data-case" in a]
    assert examples == [other_rule[0], *(i for i, *_ in wide[:3])]
    assert "and 5 more in report.json" in "".join(dom.text)
    markdown = render_markdown(doc)
    failures = markdown[markdown.index("## Verdicts other than Pass"):]
    assert failures.count("\n### ") == 2 and "and 5 more in report.json" in failures
    assert f"| {md_text(uint8)} | 2 |" in markdown.splitlines()
    assert len(doc["non_pass"]) == 9  # every case stays in the JSON
