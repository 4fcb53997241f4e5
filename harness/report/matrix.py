"""The nightly matrix file (contracts/nightly.toml): axes of named values, exclusions, a command template.

Every combination of one value per axis is a lane run, named like a case id's parameters
(``python=3.12,numpy=2.x,...,lane=gpu-racecheck``). A value may bring environment variables, needs
(what the machine must have), vars (extra command placeholders, e.g. the tox environment of a
lane), the toolchain its lane's fresh environment must have (``requires``: pip requirements, installed
without their own requirements where ``no_deps``; ``imports``: modules that must import), its own
command and a time limit. Errors name the file, the key and what was expected.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.datafile import read_toml
from harness.report.command import check_template
from harness.report.errors import ReportError

SCHEMA = 1
#: Placeholders every combination fills besides its axes and vars: its id, its own output folder, its fresh
#: environment's folder and the contracts folder (the matrix file's).
RESERVED = ("id", "out", "env", "contracts")
VALUE_KEYS = {"name", "env", "needs", "vars", "requires", "imports", "command", "no_deps", "timeout_s"}
_NAME = re.compile(r"^[A-Za-z0-9_.+-]+$")
_AXIS = re.compile(r"^[a-z][a-z0-9_]*$")
_NEED = re.compile(r"^(gpu|python:\d+\.\d+|on-path:[A-Za-z0-9_.+-]+)$")


@dataclass(frozen=True)
class Value:
    name: str
    env: dict[str, str]
    needs: tuple[str, ...]
    vars: dict[str, str]
    requires: tuple[str, ...] = ()
    imports: tuple[str, ...] = ()
    command: tuple[str, ...] = ()
    no_deps: bool = False  # its requires go in without their own requirements (metadata asking for more than needed)
    timeout_s: float | None = None


@dataclass(frozen=True)
class Combination:
    """One lane run of the matrix: a value per axis, the environment it sets and what it needs."""

    id: str
    values: dict[str, str]
    env: dict[str, str]
    needs: tuple[str, ...]
    vars: dict[str, str]
    command: tuple[str, ...]
    requires: tuple[str, ...] = ()
    imports: tuple[str, ...] = ()
    no_deps: tuple[str, ...] = ()  # those of ``requires`` installed without their own requirements
    timeout_s: float | None = None  # the smallest limit a value sets; None: the matrix's

    def placeholders(self, out: str, env: str, contracts: str) -> dict[str, str]:
        return {**self.values, **self.vars, "id": self.id, "out": out, "env": env, "contracts": contracts}

    @property
    def slug(self) -> str:
        """The id as a file name."""
        return self.id.replace(",", "_").replace("=", "-")


@dataclass(frozen=True)
class Exclusion:
    where: dict[str, frozenset[str]]
    reason: str

    def matches(self, combination: Combination) -> bool:
        return all(combination.values[axis] in names for axis, names in self.where.items())


@dataclass(frozen=True)
class Matrix:
    path: Path
    description: str
    command: tuple[str, ...]  # the default of every combination whose values bring no command
    timeout_s: float
    axes: dict[str, tuple[Value, ...]]
    exclusions: tuple[Exclusion, ...]

    def expand(self) -> tuple[list[Combination], list[tuple[Combination, str]]]:
        """(kept combinations, (excluded combination, reason)); the first matching exclusion gives the reason."""
        kept, dropped = [], []
        for values in itertools.product(*self.axes.values()):
            combo = Combination(
                id=",".join(f"{axis}={v.name}" for axis, v in zip(self.axes, values, strict=True)),
                values={axis: v.name for axis, v in zip(self.axes, values, strict=True)},
                env={k: text for v in values for k, text in v.env.items()},
                needs=tuple(dict.fromkeys(n for v in values for n in v.needs)),
                vars={k: text for v in values for k, text in v.vars.items()},
                command=next((v.command for v in values if v.command), self.command),
                requires=tuple(r for v in values for r in v.requires),
                imports=tuple(dict.fromkeys(i for v in values for i in v.imports)),
                no_deps=tuple(r for v in values if v.no_deps for r in v.requires),
                timeout_s=min((v.timeout_s for v in values if v.timeout_s is not None), default=None),
            )
            reason = next((e.reason for e in self.exclusions if e.matches(combo)), None)
            if reason is None:
                kept.append(combo)
            else:
                dropped.append((combo, reason))
        return kept, dropped


def _fail(path: Path, where: str, what: str) -> ReportError:
    return ReportError(f"{path}: {where}: {what}")


def _strings(path: Path, where: str, value: Any) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise _fail(path, where, "expected a list of strings")
    return value


def _seconds(path: Path, where: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
        raise _fail(path, where, "expected a positive number of seconds per lane run")
    return float(value)


def _value(path: Path, where: str, raw: Any) -> Value:
    if not isinstance(raw, dict) or set(raw) - VALUE_KEYS or "name" not in raw:
        raise _fail(path, where, "expected { name = ..., env = { ... }, needs = [...], vars = { ... }, "
                                 "requires = [...], no_deps = true|false, imports = [...], command = [...], "
                                 "timeout_s = N } (all but name optional)")
    if not isinstance(raw["name"], str) or not _NAME.match(raw["name"]):
        raise _fail(path, f"{where}.name", f"{raw['name']!r} may hold only letters, digits and _ . + -")
    env, variables = raw.get("env", {}), raw.get("vars", {})
    for key, table in (("env", env), ("vars", variables)):
        if not isinstance(table, dict) or not all(isinstance(v, str) for v in table.values()):
            raise _fail(path, f"{where}.{key}", "expected a table of strings")
    needs = _strings(path, f"{where}.needs", raw.get("needs", []))
    for i, need in enumerate(needs):
        if not _NEED.match(need):
            raise _fail(path, f"{where}.needs[{i}]", f"{need!r} is not gpu, python:X.Y or on-path:NAME")
    requires, imports, command = (tuple(_strings(path, f"{where}.{key}", raw.get(key, [])))
                                  for key in ("requires", "imports", "command"))
    no_deps = raw.get("no_deps", False)
    if not isinstance(no_deps, bool):
        raise _fail(path, f"{where}.no_deps", "expected true or false")
    timeout = _seconds(path, f"{where}.timeout_s", raw["timeout_s"]) if "timeout_s" in raw else None
    return Value(raw["name"], dict(env), tuple(needs), dict(variables), requires, imports, command, no_deps, timeout)


def _axes(path: Path, raw: Any) -> dict[str, tuple[Value, ...]]:
    if not isinstance(raw, dict) or not raw:
        raise _fail(path, "axes", "expected a table of axes, each a list of values")
    axes: dict[str, tuple[Value, ...]] = {}
    owner: dict[tuple[str, str], str] = {}  # (env or vars, key) -> the axis that sets it
    for axis, values in raw.items():
        if not _AXIS.match(axis) or axis in RESERVED:
            raise _fail(path, f"axes.{axis}", f"an axis name is [a-z][a-z0-9_]* and not {' or '.join(RESERVED)}")
        if not isinstance(values, list) or not values:
            raise _fail(path, f"axes.{axis}", "expected a non-empty list of values")
        parsed = tuple(_value(path, f"axes.{axis}[{i}]", v) for i, v in enumerate(values))
        names = [v.name for v in parsed]
        if len(set(names)) != len(names):
            raise _fail(path, f"axes.{axis}", f"value names repeat: {names}")
        for table, key in sorted({(t, k) for v in parsed for t in ("env", "vars") for k in getattr(v, t)}):
            if owner.setdefault((table, key), axis) != axis:
                raise _fail(path, f"axes.{axis}", f"{table} {key} is also set by axis {owner[table, key]}")
        var_keys = sorted({tuple(sorted(v.vars)) for v in parsed})
        if len(var_keys) > 1:  # else a combination could leave a placeholder unfilled
            raise _fail(path, f"axes.{axis}", f"every value must set the same vars, not {var_keys}")
        if {k for v in parsed for k in v.vars} & (set(raw) | set(RESERVED)):
            raise _fail(path, f"axes.{axis}", "a var may not be named like an axis, id or out")
        if any(v.command for v in parsed) and not all(v.command for v in parsed):
            raise _fail(path, f"axes.{axis}", "either every value brings its command or none does")
        axes[axis] = parsed
    if sum(1 for values in axes.values() if values[0].command) > 1:
        raise _fail(path, "axes", "the values of one axis at most bring commands")
    return axes


def _exclusion(path: Path, index: int, raw: Any, axes: dict[str, tuple[Value, ...]]) -> Exclusion:
    where = f"exclude[{index}]"
    if not isinstance(raw, dict) or set(raw) != {"where", "reason"} or not isinstance(raw["where"], dict):
        raise _fail(path, where, "expected where = { axis = value or [values] } and reason = \"...\"")
    if not isinstance(raw["reason"], str) or not raw["reason"].strip():
        raise _fail(path, f"{where}.reason", "say why these combinations are not run")
    match: dict[str, frozenset[str]] = {}
    for axis, names in raw["where"].items():
        if axis not in axes:
            raise _fail(path, f"{where}.where.{axis}", f"not an axis; axes: {', '.join(axes)}")
        names = [names] if isinstance(names, str) else _strings(path, f"{where}.where.{axis}", names)
        known = [v.name for v in axes[axis]]
        unknown = [n for n in names if n not in known]
        if unknown:  # a value dropped from its axis leaves the exclusion stale
            raise _fail(path, f"{where}.where.{axis}", f"{unknown} not among the values {known}")
        match[axis] = frozenset(names)
    if not match:
        raise _fail(path, f"{where}.where", "an empty where would exclude everything")
    return Exclusion(match, raw["reason"].strip())


def load_matrix(path: Path) -> Matrix:
    data = read_toml(path, ReportError)
    unknown = set(data) - {"schema", "description", "command", "timeout_s", "axes", "exclude"}
    if unknown:
        raise _fail(path, "(top level)", f"unknown keys {sorted(unknown)}")
    if data.get("schema") != SCHEMA:
        raise _fail(path, "schema", f"expected {SCHEMA}")
    axes = _axes(path, data.get("axes"))
    own = [(f"axes.{axis}[{i}].command", v.command) for axis, values in axes.items() for i, v in enumerate(values)
           if v.command]
    command = _strings(path, "command", data.get("command", [] if own else None))
    if own and command:
        raise _fail(path, "command", f"never used: every combination has its own ({own[0][0]} and its siblings)")
    var_names = {k for values in axes.values() for k in values[0].vars}
    for where, template in [("command", command)] * (not own) + own:
        check_template(template, set(axes) | var_names | set(RESERVED), f"{path}: {where}")
    timeout = _seconds(path, "timeout_s", data.get("timeout_s"))
    exclusions = tuple(_exclusion(path, i, e, axes) for i, e in enumerate(data.get("exclude", [])))
    return Matrix(path, str(data.get("description", "")).strip(), tuple(command), timeout, axes, exclusions)
