"""Load and validate the contract files (data, not code) into frozen :class:`Contract` objects.

Validation is JSON Schema (the file ``contract_schema.json``, with the vocabulary filled in from
``coop``) plus the cross-field checks a schema cannot say; every error names file, key and what
was expected.
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass, field
from functools import cache
from importlib.resources import files
from pathlib import Path
from typing import Any

import coopcheck
import jsonschema
from coopcheck.vocabulary import STATIC_RULES

from harness.boundaries import RANDOM_VALID, VALID_BOUNDARIES
from harness.datafile import read_toml
from harness.errors import ContractError
from harness.families import Oracle, load_oracle

#: The kernel axes every contract has; a family adds its own (its oracle's ``AXES``) after them.
KERNEL_AXES = ("dtype", "block", "ipt", "alg")
#: The case axes the schema knows; a family adds its own (its oracle's ``AXES``).
CASE_AXES = ("valid", "oob", "offset")
CONTRACTS_ENV = "COOP_CONTRACTS"
#: Data files of the contracts folder that are not contracts.
NOT_CONTRACTS = ("coverage", "expectations", "nightly")
#: The case budget of one contract, checked before its axes are validated or expanded: values per axis, and
#: cases per backend in the cross product of every axis (the full block.load grid holds 431,970; a case costs
#: about a kilobyte while a lane expands it, so the budget keeps one contract's expansion near 2 GB).
MAX_AXIS_VALUES = 1024
MAX_CASES = 2_000_000


@dataclass(frozen=True)
class RejectCase:
    """A static parameter combination every backend must refuse with ``rule``."""

    name: str
    rule: str
    params: dict[str, Any]


@dataclass(frozen=True)
class Rule:
    """A named semantic rule, the oracle check that enforces it, and the cases it speaks of."""

    name: str
    text: str
    check: str
    when: dict[str, tuple[Any, ...]] = field(default_factory=dict)
    matches: tuple[str, ...] = ()  # the oracle's diagnoses (known wrong implementations) this rule explains

    def applies(self, params: dict[str, Any]) -> bool:
        return all(params.get(axis) in values for axis, values in self.when.items())


@dataclass(frozen=True)
class Only:
    """Values of a case axis that exist only at the kernel points ``when`` names (elsewhere the axis's other
    values do), and why."""

    axis: str
    values: tuple[Any, ...]
    when: dict[str, tuple[Any, ...]]
    reason: str

    def excludes(self, value: Any, point: dict[str, Any]) -> bool:
        """Whether ``value`` of this entry's axis does not exist at kernel point ``point``."""
        return value in self.values and not all(point[axis] in values for axis, values in self.when.items())


@dataclass(frozen=True, eq=False)
class Contract:
    """One operation's contract: axes (kernel ones compile, case ones ride), rules, resources, its family's
    oracle, and the static parameters its rejection cases may set (in case-id order)."""

    path: Path
    id: str
    operation: str
    oracle: Oracle
    statics: tuple[str, ...]
    description: str
    axes: dict[str, tuple[Any, ...]]
    kernel_axes: tuple[str, ...]
    case_axes: tuple[str, ...]
    excluded_rules: frozenset[str]
    rules: tuple[Rule, ...]
    resources: tuple[dict[str, Any], ...]
    rejects: tuple[RejectCase, ...]
    only: tuple[Only, ...] = ()

    @property
    def axis_order(self) -> tuple[str, ...]:
        """Kernel axes then case axes: the parameter order of every case id."""
        return self.kernel_axes + self.case_axes

    @property
    def variant_axes(self) -> tuple[str, ...]:
        """The family's own kernel axes (after dtype, block, ipt and alg): a kernel spec's ``variant``."""
        return tuple(a for a in self.kernel_axes if a not in KERNEL_AXES)

    def case_values(self, axis: str, point: dict[str, Any]) -> tuple[Any, ...]:
        """The values of case axis ``axis`` that exist at kernel point ``point`` (see :class:`Only`)."""
        return tuple(v for v in self.axes[axis] if not any(o.axis == axis and o.excludes(v, point)
                                                            for o in self.only))

    def resources_for(self, point: dict[str, Any]) -> list[dict[str, Any]]:
        """The resource rules that apply to kernel point ``point`` (their ``when`` holds), as the inspector
        takes them (without ``when``)."""
        return [{k: v for k, v in r.items() if k != "when"} for r in self.resources
                if all(point.get(axis) in values for axis, values in r.get("when", {}).items())]

    def rules_for_check(self, check: str, params: dict[str, Any] | None = None) -> list[str]:
        """Rules enforced by ``check``; with a case's params, only those that speak of that case."""
        return [r.name for r in self.rules if r.check == check and (params is None or r.applies(params))]


@cache
def _schema_text() -> str:
    return files("harness").joinpath("contract_schema.json").read_text()


def _schema(oracle: Oracle) -> dict[str, Any]:
    """The schema with the vocabulary filled in: the base package's, and the checks and diagnoses of the
    contract's oracle."""
    schema: dict[str, Any] = json.loads(_schema_text())
    schema["$defs"]["dtype"] = {"enum": list(coopcheck.DTYPES)}
    schema["$defs"]["algorithm"] = {"enum": list(oracle.ALGORITHMS)}
    schema["$defs"]["kernel_axis"] = {"enum": [*KERNEL_AXES, *oracle.AXES]}
    schema["$defs"]["case_axis"] = {"enum": [*CASE_AXES, *oracle.AXES]}
    for name, values in oracle.AXES.items():
        schema["properties"]["axes"]["properties"][name] = {"$ref": "#/$defs/values", "items": {"enum": list(values)}}
    schema["$defs"]["static_rule"] = {"enum": sorted(STATIC_RULES)}
    schema["$defs"]["valid_name"] = {"anyOf": [{"enum": list(VALID_BOUNDARIES)},
                                               {"type": "string", "pattern": RANDOM_VALID.pattern}]}
    schema["$defs"]["diagnosis"] = {"enum": list(oracle.DIAGNOSES)}
    schema["$defs"]["check"] = {"enum": [*sorted(oracle.CHECKS), "rejects-statics"]}
    return schema


def _where(error: jsonschema.ValidationError) -> str:
    where = ""
    for part in error.absolute_path:
        where += f"[{part}]" if isinstance(part, int) else (f".{part}" if where else str(part))
    return where or "(top level)"


def _fail(path: Path, where: str, what: str) -> ContractError:
    return ContractError(f"{path}: {where}: {what}")


def load_contract(path: Path) -> Contract:
    """Read and validate one contract file."""
    data = read_toml(path, ContractError)
    _check_budget(path, data)
    if not isinstance(data.get("oracle"), str):
        raise _fail(path, "oracle", "the family's oracle module is required, e.g. 'harness.oracles.block_load_store'")
    oracle = load_oracle(data["oracle"], str(path))
    errors = sorted(
        jsonschema.Draft202012Validator(_schema(oracle)).iter_errors(data),
        key=lambda e: (len(e.absolute_path), list(map(str, e.absolute_path))),
    )
    if errors:
        raise _fail(path, _where(errors[0]), errors[0].message)
    roles = data["roles"]
    if not set(KERNEL_AXES) <= set(roles["kernel"]) <= set(data["axes"]):
        raise _fail(path, "roles.kernel", f"must list {', '.join(KERNEL_AXES)}, and may add axes of the contract "
                                          "(the family's own kernel axes)")
    missing = set(data["axes"]) - set(roles["kernel"]) - set(roles["case"])
    unknown = set(roles["case"]) - set(data["axes"])
    if missing or unknown or set(roles["case"]) & set(roles["kernel"]):
        others = sorted(set(data["axes"]) - set(roles["kernel"]))
        raise _fail(path, "roles.case", f"must list exactly the non-kernel axes {others}")
    problem = oracle.axes_problem(data["operation"], data["axes"])
    if problem:
        raise _fail(path, "axes", problem)
    statics = tuple(data.get("statics", ()))
    names = [r["name"] for r in data["rules"]]
    if len(names) != len(set(names)):
        raise _fail(path, "rules", f"duplicate rule name in {names}")
    variant = tuple(a for a in roles["kernel"] if a not in KERNEL_AXES)
    for i, rej in enumerate(data["reject"]):
        missing_axes = [a for a in roles["kernel"] if a not in rej["params"]]
        if missing_axes:
            raise _fail(path, f"reject[{i}].params", f"lacks the kernel axes {missing_axes}")
        _check_reject(path, i, oracle, kernel_spec(data["operation"], rej["params"], statics, variant), rej,
                      roles["kernel"])
    for i, res in enumerate(data["resources"]):
        _check_when(path, f"resources[{i}].when", res.get("when", {}), data["axes"], roles["kernel"])
    only = tuple(_only(path, i, entry, data["axes"], roles) for i, entry in enumerate(data.get("only", [])))
    return Contract(
        path=path,
        id=data["contract"],
        operation=data["operation"],
        oracle=oracle,
        statics=statics,
        description=data["description"].strip(),
        axes={k: tuple(v) for k, v in data["axes"].items()},
        kernel_axes=tuple(roles["kernel"]),
        case_axes=tuple(roles["case"]),
        excluded_rules=frozenset(e["rule"] for e in data.get("exclude", [])),
        rules=tuple(_rule(path, i, r, data["axes"]) for i, r in enumerate(data["rules"])),
        resources=tuple(data["resources"]),
        rejects=tuple(RejectCase(r["name"], r["rule"], dict(r["params"])) for r in data["reject"]),
        only=only,
    )


def _check_budget(path: Path, data: dict[str, Any]) -> None:
    """Refuse axes past the case budget before anything validates or expands them (a huge axis once ran for
    minutes into a MemoryError); the schema reports every other problem of the axes."""
    axes = data.get("axes")
    if not isinstance(axes, dict):
        return
    sizes = {name: len(values) for name, values in axes.items() if isinstance(values, list)}
    for name, size in sizes.items():
        if size > MAX_AXIS_VALUES:
            raise _fail(path, f"axes.{name}", f"{size} values, more than the {MAX_AXIS_VALUES} an axis may hold")
    product = math.prod(sizes.values())
    if product > MAX_CASES:
        shown = " x ".join(f"{name} {size}" for name, size in sizes.items())
        raise _fail(path, "axes", f"{shown} = {product} cases per backend, past the budget of {MAX_CASES}")


def _rule(path: Path, index: int, rule: dict[str, Any], axes: dict[str, list[Any]]) -> Rule:
    when = rule.get("when", {})
    for axis, values in when.items():
        unknown = [v for v in values if axis not in axes or v not in axes[axis]]
        if unknown:
            raise _fail(path, f"rules[{index}].when.{axis}", f"{unknown} are not values of a contract axis")
    return Rule(rule["name"], rule["text"], rule["check"], {k: tuple(v) for k, v in when.items()},
                tuple(rule.get("matches", ())))


def _check_when(path: Path, where: str, when: dict[str, Any], axes: dict[str, list[Any]],
                kernel: list[str]) -> None:
    """A ``when`` that selects kernel points: kernel axes only, each with values of its axis."""
    for axis, values in when.items():
        if axis not in kernel:
            raise _fail(path, f"{where}.{axis}", f"not a kernel axis ({', '.join(kernel)})")
        unknown = [v for v in values if v not in axes[axis]]
        if unknown:
            raise _fail(path, f"{where}.{axis}", f"{unknown} are not values of axis {axis}")


def _only(path: Path, index: int, entry: dict[str, Any], axes: dict[str, list[Any]],
          roles: dict[str, list[str]]) -> Only:
    where = f"only[{index}]"
    if entry["axis"] not in roles["case"]:
        raise _fail(path, f"{where}.axis", f"{entry['axis']!r} is not a case axis ({', '.join(roles['case'])})")
    unknown = [v for v in entry["values"] if v not in axes[entry["axis"]]]
    if unknown:
        raise _fail(path, f"{where}.values", f"{unknown} are not values of axis {entry['axis']}")
    _check_when(path, f"{where}.when", entry["when"], axes, roles["kernel"])
    return Only(entry["axis"], tuple(entry["values"]), {k: tuple(v) for k, v in entry["when"].items()},
                entry["reason"])


def _check_reject(path: Path, index: int, oracle: Oracle, spec: coopcheck.KernelSpec, rej: dict[str, Any],
                  kernel: list[str]) -> None:
    """A reject case must break exactly the rule it names, or it proves nothing."""
    unknown = sorted(set(rej["params"]) - set(kernel) - {name for name, _ in spec.statics})
    if unknown:
        raise _fail(path, f"reject[{index}].params", f"{unknown} are neither kernel axes nor the contract's statics")
    try:
        oracle.check_static(spec)
    except coopcheck.InvalidParameter as exc:
        if exc.rule == rej["rule"]:
            return
        raise _fail(path, f"reject[{index}]", f"breaks rule {exc.rule!r}, not the declared {rej['rule']!r}") from None
    raise _fail(path, f"reject[{index}]", f"breaks no static rule, but declares {rej['rule']!r}")


def kernel_spec(operation: str, params: dict[str, Any], statics: tuple[str, ...],
                variant: tuple[str, ...] = ()) -> coopcheck.KernelSpec:
    """The kernel spec of a case's (or a reject case's) parameters: the kernel axes (``variant``: the family's
    own, in the contract's order), and the statics it sets."""
    return coopcheck.KernelSpec(operation=operation, dtype=params["dtype"], block=parse_block(params["block"]),
                                items_per_thread=params["ipt"], algorithm=params["alg"],
                                statics=tuple((name, params[name]) for name in statics if name in params),
                                variant=tuple((name, params[name]) for name in variant))


def parse_block(text: str) -> tuple[int, ...]:
    """'16x8' -> (16, 8)."""
    return tuple(int(d) for d in text.split("x"))


def contracts_dir() -> Path:
    """The contracts folder: ``$COOP_CONTRACTS``, else the source checkout's, else ``./contracts``.

    An installed harness has no checkout beside it, so lanes that run it name the folder.
    """
    env = os.environ.get(CONTRACTS_ENV)
    if env:
        return Path(env)
    beside = Path(__file__).resolve().parent.parent / "contracts"
    return beside if beside.is_dir() else Path("contracts").resolve()


def contract_paths(directory: Path | None = None) -> list[Path]:
    """The contract files of ``directory`` (default :func:`contracts_dir`), sorted."""
    directory = directory or contracts_dir()
    paths = sorted(p for p in directory.glob("*.toml") if p.stem not in NOT_CONTRACTS)
    if not paths:
        raise ContractError(f"{directory}: no contract files (*.toml) found")
    return paths


def load_contracts(directory: Path | None = None) -> list[Contract]:
    """Every contract file in ``directory`` (sorted), failing on duplicate contract ids."""
    contracts: dict[str, Contract] = {}
    for path in contract_paths(directory):
        contract = load_contract(path)
        if contract.id in contracts:
            first = contracts[contract.id].path
            raise ContractError(f"{path}: contract id {contract.id!r} is also declared by {first}")
        contracts[contract.id] = contract
    return list(contracts.values())
