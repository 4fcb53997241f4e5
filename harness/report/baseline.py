"""The committed baseline: the final status of every case id per lane, compact enough to commit.

Ids are grouped by lane, by accepted / not accepted, by status, by ``contract/backend`` and by their
parameter keys; the parameter values of one group are packed as a tree of product sets (sibling
values whose subtrees are equal share one ``a|b|c`` key), so a full cross product costs one line::

    {"block.load/numba": {"dtype,block,ipt,alg": {"int32|int64": {"32|64": {"1|2": "direct|striped"}}}}}

stands for the 2 x 2 x 2 x 2 = 16 compile-check ids of those values.

The verdicts stored are resolved ones: the expectations file given when the baseline was written
(named with its sha256 in the file) decided each status and whether it was accepted, because the
diff compares acceptance, and only a resolved verdict has one. The diff resolves the run it compares
with the expectations in force then, so an entry that has expired since shows as a new failure.
"""

from __future__ import annotations

import gzip
import json
import re
from collections import defaultdict
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

from harness import caseid
from harness.datafile import read_json
from harness.errors import CaseIdError
from harness.report.document import Source, sha256_file
from harness.report.errors import ReportError
from harness.report.verdicts import SEVERITY, Lane
from harness.statuses import Status

SCHEMA = 1
KIND = "coop-baseline"
GROUPS = ("accepted", "not_accepted")
Node = str | dict[str, Any]



def _committable(path: Path) -> str:
    """A baseline is committed: it names a file relative to the working directory, else by its name alone (the
    sha256 beside it tells files of one name apart), never by a path of the machine that wrote it."""
    shown = Path(Source.of(path).name)
    return shown.as_posix() if not shown.is_absolute() else shown.name


def _natural(value: str) -> tuple[Any, ...]:
    """Numbers inside a value sort as numbers: '4x4' before '16x8', '256' before '1024'."""
    return tuple(int(part) if part.isdigit() else part for part in re.split(r"(\d+)", value))


class _Packer:
    """Builds product-set trees; equal subtrees get one number (hash-consing), so merging is linear."""

    def __init__(self) -> None:
        self._numbers: dict[str | tuple[tuple[str, int], ...], int] = {}

    def _number(self, key: str | tuple[tuple[str, int], ...]) -> int:
        return self._numbers.setdefault(key, len(self._numbers))

    def node(self, rows: list[tuple[str, ...]]) -> tuple[Node, int]:
        if len(rows[0]) == 1:
            leaf = "|".join(sorted({r[0] for r in rows}, key=_natural))
            return leaf, self._number(leaf)
        children: dict[str, list[tuple[str, ...]]] = defaultdict(list)
        for row in rows:
            children[row[0]].append(row[1:])
        shared: dict[int, tuple[list[str], Node]] = {}
        for value in sorted(children, key=_natural):
            sub, number = self.node(children[value])
            shared.setdefault(number, ([], sub))[0].append(value)
        keyed = {"|".join(values): (sub, number) for number, (values, sub) in shared.items()}
        return ({k: sub for k, (sub, _) in keyed.items()},
                self._number(tuple((k, number) for k, (_, number) in keyed.items())))


def pack(ids: Iterable[str]) -> dict[str, dict[str, Node]]:
    """``contract/backend`` -> parameter keys -> product-set tree of the values."""
    groups: dict[str, dict[str, list[tuple[str, ...]]]] = defaultdict(lambda: defaultdict(list))
    for case_id in ids:
        contract, backend, params = caseid.parse(case_id)
        groups[f"{contract}/{backend}"][",".join(k for k, _ in params)].append(tuple(v for _, v in params))
    packer = _Packer()
    return {prefix: {keys: packer.node(rows)[0] for keys, rows in sorted(by_keys.items())}
            for prefix, by_keys in sorted(groups.items())}


def _rows(node: Node, depth: int, where: str) -> Iterator[tuple[str, ...]]:
    if isinstance(node, str):
        if depth != 1:
            raise ReportError(f"{where}: a value list stands where {depth} more parameters are due")
        yield from ((v,) for v in node.split("|"))
        return
    if not isinstance(node, dict) or depth < 2:
        raise ReportError(f"{where}: expected {'a value list' if depth == 1 else 'an object'}")
    for values, sub in node.items():
        for rest in _rows(sub, depth - 1, f"{where}.{values}"):
            yield from ((v, *rest) for v in values.split("|"))


def unpack(packed: dict[str, dict[str, Node]], where: str) -> Iterator[str]:
    """Every case id of a packed group; a malformed entry names its place in the file."""
    for prefix, by_keys in packed.items():
        contract, _, backend = prefix.partition("/")
        for keys, node in by_keys.items():
            names = keys.split(",")
            for values in _rows(node, len(names), f"{where}.{prefix}.{keys}"):
                try:
                    yield caseid.render(contract, backend, list(zip(names, values, strict=True)))
                except CaseIdError as exc:
                    raise ReportError(f"{where}.{prefix}.{keys}: {exc}") from None


def baseline_of(lanes: Sequence[Lane], expectations: Path | None = None) -> dict[str, Any]:
    """The baseline document of ``lanes``' final verdicts, resolved by ``expectations`` (named in it)."""
    out: dict[str, Any] = {}
    for lane in lanes:
        by_group: dict[str, dict[Status, list[str]]] = {g: defaultdict(list) for g in GROUPS}
        for record in lane.cases.values():
            by_group["accepted" if record.accepted else "not_accepted"][record.status].append(record.id)
        out[lane.name] = {g: {str(s): pack(by_group[g][s]) for s in sorted(by_group[g], key=SEVERITY.__getitem__)}
                          for g in GROUPS if by_group[g]}
    applied = {"name": _committable(expectations), "sha256": sha256_file(expectations)} if expectations else None
    return {"schema": SCHEMA, "kind": KIND, "expectations": applied, "lanes": out}


def write_baseline(lanes: Sequence[Lane], path: Path, expectations: Path | None = None) -> dict[str, Any]:
    doc = baseline_of(lanes, expectations)
    path.parent.mkdir(parents=True, exist_ok=True)
    text = (json.dumps(doc, indent=1, sort_keys=False) + "\n").encode()
    path.write_bytes(gzip.compress(text, mtime=0) if path.suffix == ".gz" else text)  # mtime 0: byte-stable
    return doc


#: lane -> case id -> (status, accepted)
Verdicts = dict[str, dict[str, tuple[Status, bool]]]


def read_baseline(path: Path) -> Verdicts:
    doc = read_json(path, ReportError)
    if not isinstance(doc, dict) or doc.get("kind") != KIND or doc.get("schema") != SCHEMA:
        raise ReportError(f"{path}: not a schema-{SCHEMA} {KIND} file (write one with `baseline`)")
    return verdicts_of(doc.get("lanes", {}), f"{path}: lanes")


def verdicts_of(lanes: dict[str, Any], where: str) -> Verdicts:
    """The verdicts of the ``lanes`` of a baseline document (or of a nightly history's night)."""
    out: Verdicts = {}
    for lane, groups in lanes.items():
        verdicts = out.setdefault(lane, {})
        for group, statuses in groups.items():
            if group not in GROUPS:
                raise ReportError(f"{where}.{lane}.{group}: expected one of {', '.join(GROUPS)}")
            for status, packed in statuses.items():
                try:
                    value = Status(status)
                except ValueError:
                    raise ReportError(f"{where}.{lane}.{group}.{status}: not a status") from None
                for case_id in unpack(packed, f"{where}.{lane}.{group}.{status}"):
                    verdicts[case_id] = (value, group == "accepted")
    return out
