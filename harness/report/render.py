"""Renders the report document as Markdown, self-contained HTML and JSON.

Both text formats escape every value they show: HTML through Jinja's autoescape, Markdown through a
finalizer that backslash-escapes Markdown and HTML punctuation and any block marker a value opens with,
so a case detail holding ``<script>``, ``|`` or ``# Qualified: yes`` shows as text and cannot break a
table or make a heading. Characters no report can carry are escaped in the document already
(:mod:`harness.report.characters`), and both formats say how many.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable
from itertools import groupby
from typing import Any

import jinja2

from harness.report.characters import note
from harness.report.verdicts import SEVERITY, describe
from harness.statuses import ACCEPTED, DECLARABLE, Status

_MD_SPECIAL = re.compile(r"([\\`*_\[\]<>|&~#])")
#: How a line opens a block that is not a paragraph (besides what ``_MD_SPECIAL`` escapes): a list item, a
#: setext underline or thematic break; a value opening with one is escaped, wherever the template puts it.
_MD_OPENER = re.compile(r"^(?:(\d{1,9})(?=[.)](?:\s|$))|(?=[-+](?:\s|$))|(?==+\s*$)|(?=-+\s*$))")
_MD_INDENT = re.compile(r"^[ \t]+")  # four spaces or a tab would open a code block
#: Statuses no expectation makes acceptable: a side-by-side cell counting any is marked.
NEVER_ACCEPTED = frozenset(str(s) for s in Status if s not in ACCEPTED | DECLARABLE)
EXAMPLES = 3  # failing cases a group of them shows; every one is in the JSON
KERNELS = 12  # kernel points a group of failing cases lists, most cases first


def md_text(value: object) -> str:
    """One value as inline Markdown text: punctuation and opening block markers escaped, line breaks kept
    inside a table cell."""
    text = _MD_SPECIAL.sub(r"\\\1", str(value))
    text = _MD_OPENER.sub(lambda m: (m[1] or "") + "\\", text, count=1)
    text = _MD_INDENT.sub(lambda m: "".join(f"&#{ord(c)};" for c in m[0]), text)
    return "<br>".join(text.splitlines()) if "\n" in text or "\r" in text else text


def heat(rate: float) -> str:
    """Cell colour of a pass rate: red (0) through amber to green (1)."""
    return f"hsl({round(rate * 120)} 65% 38%)"


def _status_columns(doc: dict[str, Any]) -> list[str]:
    seen = {s for table in ("categories", "lanes") for t in doc["counts"][table].values() for s in t["statuses"]}
    return [str(s) for s in sorted(SEVERITY, key=SEVERITY.__getitem__) if str(s) in seen]


def _groups(doc: dict[str, Any]) -> list[dict[str, Any]]:
    """Non-pass verdicts grouped by lane, status, acceptance and rules (one bug fails many cases, each with its
    own detail), each group with its kernel points (how many cases each, the first ``KERNELS``) and its first
    ``EXAMPLES`` cases; the report's JSON keeps every case (``non_pass``)."""
    lane_order = {lane["name"]: i for i, lane in enumerate(doc["lanes"])}
    severity = {str(s): rank for s, rank in SEVERITY.items()}

    def key(row: dict[str, Any]) -> tuple[Any, ...]:
        return lane_order[row["lane"]], -severity[row["status"]], row["accepted"], row["rules"]

    groups = []
    for _, found in groupby(sorted(doc["non_pass"], key=lambda r: (*key(r), r["id"])), key=key):
        members = list(found)
        kernels = Counter(describe(row["id"]).kernel for row in members).most_common()
        groups.append({**members[0], "cases": len(members), "examples": members[:EXAMPLES],
                       "more": len(members[EXAMPLES:]), "kernels": kernels[:KERNELS],
                       "more_kernels": len(kernels[KERNELS:]), "kernel_count": len(kernels)})
    return groups


def _grid_rows(entry: dict[str, Any], legend: dict[str, str]) -> list[dict[str, Any]]:
    """The coverage grid of one contract x backend as rows of (algorithm, block), a cell per dtype (None where
    nothing ran): the lanes' letters (a failing lane's marked ``!``), its pass rate and verdict."""
    dtypes = entry["grid"]["dtypes"]
    rows: dict[tuple[str, str], dict[str, Any]] = {}
    for cell in entry["grid"]["cells"]:
        row = rows.setdefault((cell["alg"], cell["block"]), {"alg": cell["alg"], "block": cell["block"],
                                                              "cells": dict.fromkeys(dtypes)})
        lanes = cell["lanes"]
        passed, total = (sum(n[k] for n in lanes.values()) for k in ("passed", "total"))
        row["cells"][cell["dtype"]] = {
            "text": " ".join(legend[lane] + ("" if n["passed"] == n["total"] else "!") for lane, n in lanes.items()),
            "lanes": " ".join(lanes), "rate": passed / total, "verdict": "pass" if passed == total else "fail",
            "title": ", ".join(f"{lane} {n['passed']}/{n['total']}" for lane, n in lanes.items()),
        }
    return [{**row, "cells": [row["cells"][d] for d in dtypes]} for row in rows.values()]


def _view(doc: dict[str, Any]) -> dict[str, Any]:
    legend = doc["checked"]["grids"]["legend"]
    grids = {(e["contract"], e["backend"]): _grid_rows(e, legend) for e in doc["checked"]["entries"]}
    return {**doc, "status_columns": _status_columns(doc), "groups": _groups(doc), "heat": heat, "note": note,
            "grid_rows": grids, "never_accepted": NEVER_ACCEPTED}


def _environment(finalize: Callable[[Any], Any] | None, autoescape: bool) -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.PackageLoader("harness.report", "templates"),
        autoescape=autoescape,
        finalize=finalize,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )


def render_markdown(doc: dict[str, Any]) -> str:
    return _environment(md_text, autoescape=False).get_template("report.md.j2").render(_view(doc))


def render_markdown_template(name: str, view: dict[str, Any]) -> str:
    """Another report's Markdown (e.g. the nightly roll-up), every value escaped as in the qualification report."""
    return _environment(md_text, autoescape=False).get_template(name).render(view)


def render_html(doc: dict[str, Any]) -> str:
    return _environment(None, autoescape=True).get_template("report.html.j2").render(_view(doc))


def render_json(doc: dict[str, Any]) -> str:
    return json.dumps(doc, indent=1, ensure_ascii=False) + "\n"
