"""The qualification bundle (a folder or a .tar.gz) and its verifier.

A bundle holds the report files, the journals they were made from, the expectations, the wheel
manifest and the coverage manifest, indexed by ``SHA256SUMS`` in coreutils' format (``sha256sum -c
SHA256SUMS`` works too). SHA256SUMS is not signed, so the verifier also rebuilds the report from the
bundled journals, applying the bundled expectations and coverage manifest, and compares every count
and every waiver: a report edited together with its hash still fails.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import re
import shutil
import tarfile
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path, PurePosixPath
from typing import Any

from junitparser import JUnitXml

from harness.errors import HarnessError
from harness.report import document
from harness.report.document import Inputs, Source, sha256_file
from harness.report.errors import ReportError
from harness.report.junit import write_junit
from harness.report.qualification import write_report
from harness.report.render import render_html, render_markdown

SUMS = "SHA256SUMS"
EXPECTATIONS = "expectations.toml"
MANIFEST = "wheel-manifest.json"
COVERAGE = "coverage.toml"
TAR_SUFFIX = ".tar.gz"
_SUM_LINE = re.compile(r"^([0-9a-f]{64}) [ *](.+)$")
_MAX_LISTED = 20


def write_bundle(dest: Path, journals: Sequence[Path], expectations: Path | None = None,
                 manifest: Path | None = None, coverage: Path | None = None,
                 generated: dt.datetime | None = None) -> dict[str, Any]:
    """Write the bundle to ``dest``: a new or empty folder, or a file named ``*.tar.gz`` (replaced whole
    once the new one is complete); returns the report document."""
    tar_file = dest.name.endswith(TAR_SUFFIX)
    in_the_way = dest.is_dir() if tar_file else dest.is_file() or (dest.is_dir() and any(dest.iterdir()))
    if in_the_way:
        raise ReportError(f"{dest}: already exists; a bundle folder is written to a new or empty path")
    files = {EXPECTATIONS: expectations, MANIFEST: manifest, COVERAGE: coverage}
    if not tar_file:
        return _fill(dest, journals, files, generated)
    dest.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=dest.parent) as tmp:
        root = Path(tmp) / dest.name.removesuffix(TAR_SUFFIX)
        doc = _fill(root, journals, files, generated)
        with tarfile.open(Path(tmp) / dest.name, "w:gz") as tar:
            tar.add(root, arcname=root.name)
        os.replace(Path(tmp) / dest.name, dest)
    return doc


def _fill(root: Path, journals: Sequence[Path], files: dict[str, Path | None],
          generated: dt.datetime | None) -> dict[str, Any]:
    """Copy the inputs in (``files``: bundle name -> the file, if given), write the report and the index."""
    (root / "journals").mkdir(parents=True, exist_ok=True)

    def copy(src: Path, rel: str) -> Source:
        try:
            shutil.copyfile(src, root / rel)
        except OSError as exc:
            raise ReportError(f"{src}: cannot copy into the bundle: {exc.strerror}") from None
        return Source(root / rel, rel)

    given = {rel: copy(src, rel) for rel, src in files.items() if src is not None}
    inputs = Inputs(
        journals=[copy(p, f"journals/{i}-{p.name}") for i, p in enumerate(journals, 1)],
        expectations=given.get(EXPECTATIONS), manifest=given.get(MANIFEST), coverage=given.get(COVERAGE),
    )
    doc = write_report(inputs, root, generated)
    listed = sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file())
    (root / SUMS).write_text("".join(f"{sha256_file(root / f)}  {f}\n" for f in listed), encoding="utf-8")
    return doc


def verify_bundle(bundle: Path) -> list[str]:
    """Every problem found in ``bundle``, each naming the file or the count; an empty list means it verifies."""
    if bundle.is_dir():
        return _verify(bundle)
    if bundle.is_file() and tarfile.is_tarfile(bundle):
        with tempfile.TemporaryDirectory() as tmp:
            try:
                with tarfile.open(bundle) as tar:
                    tar.extractall(tmp, filter="data")  # refuses links and paths that leave tmp
            except (tarfile.TarError, OSError) as exc:
                return [f"{bundle}: damaged or unsafe archive: {exc}"]
            entries = list(Path(tmp).iterdir())
            return _verify(entries[0] if len(entries) == 1 and entries[0].is_dir() else Path(tmp))
    raise ReportError(f"{bundle}: not a bundle (expected a folder or a {TAR_SUFFIX} written by `bundle`)")


def _verify(root: Path) -> list[str]:
    problems = _check_sums(root)
    report = root / "report.json"
    if not report.is_file():
        return [*problems, "report.json: missing, so no count can be checked"]
    try:
        claimed = json.loads(report.read_text(encoding="utf-8"))
        inputs = _inputs(root, claimed["inputs"])
        rebuilt = document.build(inputs, dt.datetime.fromisoformat(claimed["generated"]))
    except (json.JSONDecodeError, KeyError, TypeError, ValueError) as exc:
        return [*problems, f"report.json: not a report written by `bundle` ({type(exc).__name__}: {exc})"]
    except HarnessError as exc:
        return [*problems, f"cannot rebuild the report from the bundled inputs: {exc}"]
    mismatches = [f"report.json: {where} is {_shown(mine)}, but the journals give {_shown(theirs)}"
                  for where, mine, theirs in _differences(claimed, rebuilt)]
    # The report's date decides which expectations have expired: it cannot precede the runs it reports.
    mismatches += [f"report.json: generated {claimed['generated']}, before lane {lane['name']} started "
                   f"({lane['started']}): a backdated report would revive expired expectations"
                   for lane in rebuilt["lanes"]
                   if dt.datetime.fromisoformat(lane["started"]) > dt.datetime.fromisoformat(claimed["generated"])]
    if len(mismatches) > _MAX_LISTED:
        mismatches[_MAX_LISTED:] = [f"... and {len(mismatches) - _MAX_LISTED} more differences in report.json"]
    problems += mismatches
    if not mismatches:
        problems += _check_renders(root, inputs, claimed)
    return problems


def _check_sums(root: Path) -> list[str]:
    sums = root / SUMS
    if not sums.is_file():
        return [f"{SUMS}: missing: the bundle's files cannot be checked"]
    problems = []
    listed: set[str] = set()
    for number, line in enumerate(sums.read_text(encoding="utf-8").splitlines(), 1):
        match = _SUM_LINE.match(line)
        rel = PurePosixPath(match.group(2)) if match else None
        if match is None or rel is None or rel.is_absolute() or ".." in rel.parts:
            problems.append(f"{SUMS}:{number}: not a '<sha256>  <relative path>' line: {line!r}")
            continue
        listed.add(str(rel))
        path = root / rel
        if not path.is_file():
            problems.append(f"{rel}: listed in {SUMS} but missing from the bundle")
        elif sha256_file(path) != match.group(1):
            problems.append(f"{rel}: sha256 differs from {SUMS}: the file was changed after bundling")
    for path in sorted(root.rglob("*")):
        name = path.relative_to(root).as_posix()
        if path.is_file() and name != SUMS and name not in listed:
            problems.append(f"{name}: in the bundle but not listed in {SUMS}")
    return problems


def _inputs(root: Path, claimed: dict[str, Any]) -> Inputs:
    def source(entry: dict[str, Any]) -> Source:
        rel = PurePosixPath(entry["name"])
        if rel.is_absolute() or ".." in rel.parts:
            raise ValueError(f"input {entry['name']!r} is not a path inside the bundle")
        return Source(root / rel, str(rel))

    optional = {key: source(claimed[key]) for key in ("expectations", "manifest", "coverage") if key in claimed}
    return Inputs([source(e) for e in claimed["journals"]], **optional)


def _differences(mine: Any, theirs: Any, where: str = "") -> Iterator[tuple[str, Any, Any]]:
    """(path, claimed, rebuilt) for every leaf that differs, e.g. ``counts.categories['numba GPU checks'].total``."""
    if isinstance(mine, dict) and isinstance(theirs, dict):
        for key in list(mine) + [k for k in theirs if k not in mine]:
            step = f".{key}" if re.fullmatch(r"[A-Za-z_]\w*", key) else f"[{key!r}]"
            yield from _differences(mine.get(key), theirs.get(key), f"{where}{step}".lstrip("."))
    elif isinstance(mine, list) and isinstance(theirs, list):
        if len(mine) != len(theirs):
            yield f"{where} (length)", len(mine), len(theirs)
            return
        for i, (a, b) in enumerate(zip(mine, theirs, strict=True)):
            yield from _differences(a, b, f"{where}[{i}]")
    elif mine != theirs:
        yield where or "(the whole report)", mine, theirs


def _shown(value: Any) -> str:
    return "absent" if value is None else repr(value)


def _check_renders(root: Path, inputs: Inputs, doc: dict[str, Any]) -> list[str]:
    """The rendered files must be what the (verified) report document renders to."""
    problems = []
    for name, text in (("report.md", render_markdown(doc)), ("report.html", render_html(doc))):
        path = root / name
        if not path.is_file() or path.read_text(encoding="utf-8") != text:
            problems.append(f"{name}: missing or not the rendering of report.json")
    with tempfile.TemporaryDirectory() as tmp:
        junit = Path(tmp) / "junit.xml"
        lanes, _ = document.load(inputs, dt.datetime.fromisoformat(doc["generated"]).date())
        write_junit(lanes, junit)
        path = root / "junit.xml"
        if not path.is_file() or _junit_content(path) != _junit_content(junit):
            problems.append("junit.xml: missing or not the JUnit rendering of the journals")
    return problems


def _junit_content(path: Path) -> list[tuple[str, ...]]:
    """What a JUnit file says, apart from layout (which differs with the XML library junitparser finds)."""
    try:
        xml = JUnitXml.fromfile(str(path))
    except Exception as exc:  # junitparser raises lxml's or ElementTree's own parse errors
        return [("unreadable", type(exc).__name__)]
    return [(suite.name, case.classname, case.name, str(case.time),
             *(f"{type(r).__name__}:{r.type}:{r.message}:{r.text}" for r in case.result))
            for suite in xml for case in suite]

