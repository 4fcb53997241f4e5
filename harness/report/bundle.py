"""The qualification bundle (a folder or a .tar.gz) and its verifier.

A bundle holds the report files, the journals they were made from, the expectations, the wheel
manifest and the coverage manifest, indexed by ``SHA256SUMS`` in coreutils' format (``sha256sum -c
SHA256SUMS`` works too). It is written aside and moved into place whole. SHA256SUMS is not signed, so
the verifier also rebuilds the report from the bundled journals, applying the bundled expectations and
coverage manifest, and compares every count and every waiver, and every element and attribute of
junit.xml: a report edited together with its hash still fails. A bundle is hostile until verified: a
tar is checked against its own index before a byte is extracted (size, links, kinds of member), and a
folder bundle holding a link is refused unread.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import posixpath
import re
import shutil
import stat
import tarfile
import tempfile
import xml.etree.ElementTree as ET
import zlib
from collections.abc import Iterator, Sequence
from pathlib import Path, PurePosixPath
from typing import Any

from harness.errors import HarnessError
from harness.report import document
from harness.report.document import Inputs, Source, sha256_file
from harness.report.errors import ReportError
from harness.report.folders import beside, swapped_in
from harness.report.junit import write_junit
from harness.report.qualification import write_files
from harness.report.render import render_html, render_markdown

SUMS = "SHA256SUMS"
EXPECTATIONS = "expectations.toml"
MANIFEST = "wheel-manifest.json"
COVERAGE = "coverage.toml"
TAR_SUFFIX = ".tar.gz"
_SUM_LINE = re.compile(r"^([0-9a-f]{64}) [ *](.+)$")
_MAX_LISTED = 20
#: What the verifier extracts from a tar at most: its index's total, bounded by the archive's own size (a
#: bundle's text compresses about 20 times; a gzip bomb 1000 times), and its count of members.
EXPAND_RATIO = 200
EXPAND_FLOOR = 64 << 20
MAX_MEMBERS = 10_000


def write_bundle(dest: Path, journals: Sequence[Path], expectations: Path | None = None,
                 manifest: Path | None = None, coverage: Path | None = None, contracts: Sequence[Path] = (),
                 generated: dt.datetime | None = None) -> dict[str, Any]:
    """Write the bundle to ``dest``: a new or empty folder, or a file named ``*.tar.gz`` (replaced whole
    once the new one is complete); returns the report document."""
    tar_file = dest.name.endswith(TAR_SUFFIX)
    in_the_way = dest.is_dir() if tar_file else dest.is_file() or (dest.is_dir() and any(dest.iterdir()))
    if in_the_way:
        raise ReportError(f"{dest}: already exists; a bundle folder is written to a new or empty path")
    files = {EXPECTATIONS: expectations, MANIFEST: manifest, COVERAGE: coverage}
    if not tar_file:
        with swapped_in(dest) as root:
            return _fill(root, journals, contracts, files, generated)
    with beside(dest) as tmp:
        root = tmp / dest.name.removesuffix(TAR_SUFFIX)
        doc = _fill(root, journals, contracts, files, generated)
        with tarfile.open(tmp / dest.name, "w:gz") as tar:
            tar.add(root, arcname=root.name)
        os.replace(tmp / dest.name, dest)
    return doc


def _fill(root: Path, journals: Sequence[Path], contracts: Sequence[Path], files: dict[str, Path | None],
          generated: dt.datetime | None) -> dict[str, Any]:
    """Copy the inputs in (``files``: bundle name -> the file, if given), write the report and the index."""
    (root / "journals").mkdir(parents=True, exist_ok=True)
    if contracts:
        (root / "contracts").mkdir()

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
        contracts=[copy(p, f"contracts/{p.name}") for p in contracts],
    )
    doc = write_files(inputs, root, generated)
    listed = sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file())
    (root / SUMS).write_text("".join(f"{sha256_file(root / f)}  {f}\n" for f in listed), encoding="utf-8")
    return doc


def verify_bundle(bundle: Path) -> list[str]:
    """Every problem found in ``bundle``, each naming the file or the count; an empty list means it verifies."""
    if bundle.is_dir():
        return _links(bundle) or _verify(bundle)
    if bundle.is_file() and tarfile.is_tarfile(bundle):
        try:
            with tarfile.open(bundle) as tar:
                members = _index(bundle, tar)
                if isinstance(members, str):
                    return [members]
                with tempfile.TemporaryDirectory() as tmp:
                    tar.extractall(tmp, members=members, filter="data")  # refuses paths that leave tmp
                    entries = list(Path(tmp).iterdir())
                    return _verify(entries[0] if len(entries) == 1 and entries[0].is_dir() else Path(tmp))
        except (tarfile.TarError, OSError, EOFError, zlib.error) as exc:
            return [f"{bundle}: damaged or unsafe archive: {exc}"]
    raise ReportError(f"{bundle}: not a bundle (expected a folder or a {TAR_SUFFIX} written by `bundle`)")


def _index(bundle: Path, tar: tarfile.TarFile) -> list[tarfile.TarInfo] | str:
    """The members of ``tar`` as its own index lists them (read without extracting: tarfile skips their data),
    or the problem that refuses it: a member that is not a plain file or folder, a name given twice, more
    members or more bytes than the bounds, or more bytes than the disk has free."""
    bound = max(EXPAND_FLOOR, EXPAND_RATIO * bundle.stat().st_size)
    members: list[tarfile.TarInfo] = []
    names: set[str] = set()
    total = 0
    for member in tar:
        what = ("a symbolic link" if member.issym() else "a hard link" if member.islnk() else
                "a sparse file" if member.issparse() else None if member.isfile() or member.isdir() else
                "not a plain file or folder")
        if what is not None:
            return f"{bundle}: {member.name}: {what}: a bundle holds plain files only"
        name = posixpath.normpath(member.name)
        if name in names:
            return f"{bundle}: {member.name}: in the archive twice: a bundle names each file once"
        names.add(name)
        total += member.size
        if total > bound:
            return (f"{bundle}: its index says it expands to at least {total} bytes, more than this verifier "
                    f"extracts from an archive of {bundle.stat().st_size} bytes (at most {EXPAND_RATIO} times "
                    f"its size, at least {EXPAND_FLOOR}): refused before extracting anything")
        members.append(member)
        if len(members) > MAX_MEMBERS:
            return f"{bundle}: more than {MAX_MEMBERS} members: refused before extracting anything"
    free = shutil.disk_usage(tempfile.gettempdir()).free
    if total > free:
        return f"{bundle}: expands to {total} bytes, more than the {free} free in {tempfile.gettempdir()}"
    return members


def _links(root: Path) -> list[str]:
    """Every link, and every entry that is not a plain file or folder, in a folder bundle (none is followed)."""
    problems = []
    for folder, dirs, files in os.walk(root):
        for name in sorted(dirs + files):
            path = Path(folder, name)
            mode = path.lstat().st_mode
            if stat.S_ISLNK(mode):
                problems.append(f"{path.relative_to(root).as_posix()}: a symbolic link: a bundle holds plain files "
                                "only")
            elif not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
                problems.append(f"{path.relative_to(root).as_posix()}: not a plain file or folder: a bundle holds "
                                "plain files only")
    return problems


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
    try:
        index = sums.read_bytes().decode("utf-8")
    except UnicodeDecodeError as exc:
        return [f"{SUMS}: not UTF-8 text (byte at offset {exc.start}): the bundle's files cannot be checked"]
    problems = []
    listed: set[str] = set()
    for number, line in enumerate(index.splitlines(), 1):
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
    return Inputs([source(e) for e in claimed["journals"]], **optional,
                  contracts=[source(e) for e in claimed.get("contracts", [])])


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
        if not path.is_file() or path.read_bytes() != text.encode("utf-8"):
            problems.append(f"{name}: missing or not the rendering of report.json")
    with tempfile.TemporaryDirectory() as tmp:
        junit = Path(tmp) / "junit.xml"
        lanes, _ = document.load(inputs, dt.datetime.fromisoformat(doc["generated"]).date())
        write_junit(lanes, junit)
        problem = _junit_problem(root / "junit.xml", junit)
    return problems + ([f"junit.xml: {problem}"] if problem else [])


def _junit_problem(path: Path, rebuilt: Path) -> str | None:
    """How the bundled junit.xml differs from the one the journals give (every element, attribute and text;
    not the layout, which differs with the XML library junitparser finds), or None."""
    if not path.is_file():
        return "missing"
    data = path.read_bytes()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return f"not UTF-8 text (byte at offset {exc.start})"
    if "<!DOCTYPE" in text:  # entities, and so entity expansion, need one; the JUnit writer never writes one
        return "declares a DOCTYPE: the JUnit rendering of journals has none"
    try:
        mine = ET.fromstring(data)
    except ET.ParseError as exc:
        return f"not well-formed XML: {exc}"
    where = next(_xml_differences(mine, ET.parse(rebuilt).getroot(), mine.tag), None)
    return None if where is None else f"not the JUnit rendering of the journals: {where}"


def _xml_differences(mine: ET.Element, theirs: ET.Element, where: str) -> Iterator[str]:
    """Each difference of two element trees, e.g. ``testsuites/testsuite[gpu] attribute failures is '0', but
    the journals give '1'``; text that is only layout (whitespace between elements) is ignored."""
    if mine.tag != theirs.tag:
        yield f"{where}: element <{mine.tag}>, but the journals give <{theirs.tag}>"
        return
    for key in sorted(mine.attrib.keys() | theirs.attrib.keys()):
        if mine.get(key) != theirs.get(key):
            yield f"{where} attribute {key} is {_shown(mine.get(key))}, but the journals give {_shown(theirs.get(key))}"
    if _text(mine.text) != _text(theirs.text):
        yield f"{where} text is {_text(mine.text)!r}, but the journals give {_text(theirs.text)!r}"
    if len(mine) != len(theirs):
        yield f"{where}: {len(mine)} elements inside, but the journals give {len(theirs)}"
        return
    for a, b in zip(mine, theirs, strict=True):
        label = b.get("name")
        yield from _xml_differences(a, b, f"{where}/{b.tag}" + (f"[{label}]" if label else ""))


def _text(text: str | None) -> str:
    return text if text and text.strip() else ""
