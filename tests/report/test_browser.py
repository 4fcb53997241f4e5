"""The HTML report as a person sees it: headless Chromium renders it offline with the right counts.

CI sets COOP_REQUIRE_BROWSER=1 (and installs Debian's ``chromium``): there, a missing browser fails
this test instead of skipping it.
"""

from __future__ import annotations

import datetime as dt
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from harness.report.document import Inputs, Source
from harness.report.qualification import write_report
from tests.report.dom import Elements
from tests.report.journals import CONTRACT, QUESTION

BROWSERS = ("chromium", "chromium-browser", "google-chrome")
REQUIRE = "COOP_REQUIRE_BROWSER"
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run",
         "--disable-component-update", "--disable-sync")


def browser() -> str:
    found = next(filter(None, map(shutil.which, BROWSERS)), None)
    if found is None:
        if os.environ.get(REQUIRE) == "1":
            pytest.fail(f"{REQUIRE}=1 but no browser ({', '.join(BROWSERS)}) is on PATH: apt-get install chromium")
        pytest.skip(f"no headless browser on PATH; {REQUIRE}=1 makes this a failure")
    return found


def rendered_dom(html: Path, profile: Path) -> str:
    """The DOM after Chromium loaded and laid out the page (scripts, had any run, would show here)."""
    proc = subprocess.run([browser(), *FLAGS, f"--user-data-dir={profile}", "--dump-dom", html.as_uri()],
                          capture_output=True, text=True, timeout=180, check=False)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc.stdout


def test_chromium_renders_the_counts_and_runs_no_script(qualification: list[Path], tmp_path: Path) -> None:
    out = tmp_path / "report"
    doc = write_report(Inputs([Source.of(p) for p in qualification]), out, dt.datetime(2026, 3, 1, tzinfo=dt.UTC))
    dom = Elements(rendered_dom(out / "report.html", tmp_path / "profile"))
    for name, counts in doc["counts"]["categories"].items():
        assert dom.counts[name, "total"] == str(counts["total"])
        assert dom.counts[name, "accepted"] == str(counts["accepted"])
        for status, n in counts["statuses"].items():
            assert dom.counts[name, status] == str(n)
    assert dom.counts["gpu", "Fail"] == "1"
    for table in doc["counts"]["side_by_side"]["contracts"]:  # the backends side by side, every cell shown
        for backend, column in table["columns"].items():
            shown = {row: dom.cells[table["contract"], row, backend] for row in ("checks", *column["statuses"])}
            assert shown == {"checks": str(column["total"]), **{s: str(n) for s, n in column["statuses"].items()}}
    assert dom.cells["block.load", "Fail", "cutlass"] == "1"
    assert doc["summary"]["passed"] in dom.text
    heat_cells = [a for tag, a in dom.tags if tag == "div" and "data-backend" in a]
    assert len(heat_cells) == len(doc["counts"]["pass_rates"]["contracts"]) * 3
    body = next(a for tag, a in dom.tags if tag == "body")
    assert "data-pwned" not in body  # the <script> inside a case detail stayed text
    assert "script" not in {tag for tag, _ in dom.tags}


def test_chromium_lays_out_the_coverage_grid_a_reviewer_reads(checked_lanes: list[Path], tmp_path: Path) -> None:
    """The question "was warp_transpose on a 3-D block with uint8 checked under racecheck?" has its square."""
    out = tmp_path / "report"
    doc = write_report(Inputs([Source.of(p) for p in checked_lanes], contracts=[Source.of(CONTRACT)]), out,
                       dt.datetime(2026, 3, 1, tzinfo=dt.UTC))
    dom = Elements(rendered_dom(out / "report.html", tmp_path / "profile"))
    squares = [a for tag, a in dom.tags if tag == "div" and "data-verdict" in a]
    [grid] = [e["grid"] for e in doc["checked"]["entries"]]
    rows = {(c["alg"], c["block"]) for c in grid["cells"]}
    assert len(squares) == len(rows) * len(grid["dtypes"])  # a square per row and dtype, empty where nothing ran
    [asked] = [a for a in squares if (a["data-alg"], a["data-block"], a["data-dtype"]) == tuple(QUESTION.values())]
    assert (asked["data-lanes"], asked["data-verdict"]) == ("host gpu gpu-racecheck", "pass")
    [failing] = [a for a in squares if a["data-alg"] == "vectorize" and a["data-verdict"] != "none"]
    assert (failing["data-verdict"], failing["title"]) == ("fail", "gpu 1/2")
