"""Cases: expansion of a contract's axes into canonical cases, the two profiles, and seeds.

A case is one contract x backend x kernel point x case point (or one rejection). Kernel points
compile once; all case points of a kernel point ride in one batched launch.
"""

from __future__ import annotations

import hashlib
import itertools
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from functools import cache, cached_property
from typing import Any

import coop
from coop.vocabulary import STATIC_RULES

from harness import caseid
from harness.contracts import Contract, RejectCase, parse_block
from harness.errors import CaseIdError

PROFILES = ("full", "pr")
#: The global seed unless a run names another; every case seed derives from it and the case id.
DEFAULT_SEED = 20261129
#: Element offsets of the offset classes: 32 elements is 16-byte aligned for every dtype.
OFFSET_ELEMENTS = {"zero": 0, "aligned": 32, "misaligned": 1}
#: Pairs of kernel axes the ``pr`` profile covers completely (valid classes ride in every launch).
PR_PAIRS = (("alg", "dtype"), ("alg", "block"), ("alg", "ipt"))
STATIC_KEYS = ("static_valid_items", "static_offset", "store_oob_default")


@dataclass(frozen=True)
class Case:
    """One case; ``params`` are in the contract's axis order (plus statics for a rejection)."""

    contract: Contract = field(compare=False, hash=False, repr=False)
    backend: str
    params: tuple[tuple[str, Any], ...]
    reject: RejectCase | None = None

    @cached_property  # read many times per case (seed, journal, judging); rendering checks every value
    def id(self) -> str:
        return caseid.render(self.contract.id, self.backend, list(self.params))

    def __getitem__(self, key: str) -> Any:
        return dict(self.params)[key]

    @property
    def spec(self) -> coop.KernelSpec:
        p = dict(self.params)
        return coop.KernelSpec(
            operation=self.contract.operation,
            dtype=p["dtype"],
            block=parse_block(p["block"]),
            items_per_thread=p["ipt"],
            algorithm=p["alg"],
            static_valid_items=p.get("static_valid_items"),
            static_offset=p.get("static_offset"),
            store_oob_default=p.get("store_oob_default", False),
        )

    def seed(self, global_seed: int) -> int:
        """Deterministic per-case seed: the same id and global seed always draw the same data."""
        digest = hashlib.sha256(f"{global_seed}:{self.id}".encode()).digest()
        return int.from_bytes(digest[:8], "little")

    def valid_items(self, global_seed: int) -> int:
        tile = self.spec.tile
        cls = self["valid"]
        if cls == "partial":
            return 1 + self.seed(global_seed) % max(tile - 2, 1) if tile > 2 else min(1, tile)
        return {"full": tile, "zero": 0, "one": min(1, tile), "tile-1": max(tile - 1, 0)}[cls]

    def offset(self) -> int:
        return OFFSET_ELEMENTS[self["offset"]]

    def has_oob(self) -> bool:
        return dict(self.params).get("oob") == "value"


def _kernel_ok(contract: Contract, point: dict[str, Any]) -> bool:
    """False for points an excluded static rule rejects; other rule breaks are contract bugs."""
    try:
        coop.check_static(
            contract.operation,
            block=parse_block(point["block"]),
            items_per_thread=point["ipt"],
            algorithm=point["alg"],
            dtype=point["dtype"],
        )
    except coop.InvalidParameter as exc:
        if exc.rule in contract.excluded_rules:
            return False
        from harness.errors import ContractError

        raise ContractError(f"{contract.path}: axes: kernel point {point} breaks static rule {exc.rule!r}: "
                            f"{STATIC_RULES[exc.rule]}") from None
    return True


@cache
def kernel_points(contract: Contract, profile: str) -> tuple[tuple[tuple[str, Any], ...], ...]:
    """The profile's kernel points, each as ((axis, value), ...) in kernel-axis order."""
    if profile not in PROFILES:
        raise ValueError(f"unknown profile {profile!r}; profiles: {', '.join(PROFILES)}")
    axes = contract.kernel_axes
    grid = [tuple(zip(axes, values, strict=True))
            for values in itertools.product(*(contract.axes[a] for a in axes))]
    grid = [p for p in grid if _kernel_ok(contract, dict(p))]
    return tuple(grid if profile == "full" else _covering(grid, contract))


def _pairs(point: dict[str, Any]) -> set[tuple[str, Any, str, Any]]:
    return {(a, point[a], b, point[b]) for a, b in PR_PAIRS}


def _covering(grid: list[tuple[tuple[str, Any], ...]], contract: Contract) -> list[tuple[tuple[str, Any], ...]]:
    """Greedy deterministic covering of ``PR_PAIRS`` over the valid grid (first best wins)."""
    dicts = [dict(p) for p in grid]
    wanted = set().union(*(_pairs(d) for d in dicts))
    chosen: list[tuple[tuple[str, Any], ...]] = []
    while wanted:
        best = max(range(len(grid)), key=lambda i: (len(_pairs(dicts[i]) & wanted), -i))
        wanted -= _pairs(dicts[best])
        chosen.append(grid[best])
    return chosen


def expand(contract: Contract, backend: str, profile: str) -> list[Case]:
    """Every case of one contract for one backend and profile, rejections included."""
    cases: list[Case] = []
    case_axes = contract.case_axes
    for point in kernel_points(contract, profile):
        for values in itertools.product(*(contract.axes[a] for a in case_axes)):
            cases.append(Case(contract, backend, point + tuple(zip(case_axes, values, strict=True))))
    for rej in contract.rejects:
        cases.append(reject_case(contract, backend, rej))
    _check_unique(cases, contract)
    return cases


def reject_case(contract: Contract, backend: str, rej: RejectCase) -> Case:
    p = rej.params
    params = [(a, p[a]) for a in contract.kernel_axes]
    params += [(k, p[k]) for k in STATIC_KEYS if k in p]
    params.append(("reject", rej.name))
    return Case(contract, backend, tuple(params), rej)


def _check_unique(cases: Iterable[Case], contract: Contract) -> None:
    seen: set[str] = set()
    for case in cases:
        if case.id in seen:
            raise CaseIdError(f"{contract.path}: case id generated twice: {case.id}")
        seen.add(case.id)


def case_from_id(case_id: str, contracts: Iterable[Contract]) -> Case:
    """Parse an id back into a :class:`Case` (typed by the contract's axes)."""
    contract_id, backend, params = caseid.parse(case_id)
    by_id = {c.id: c for c in contracts}
    if contract_id not in by_id:
        raise CaseIdError(f"{case_id!r}: unknown contract {contract_id!r}")
    contract = by_id[contract_id]
    text = dict(params)
    if "reject" in text:
        rej = next((r for r in contract.rejects if r.name == text["reject"]), None)
        if rej is None:
            raise CaseIdError(f"{case_id!r}: contract {contract_id} has no reject case {text['reject']!r}")
        case = reject_case(contract, backend, rej)
    else:
        typed = []
        for key, value in params:
            if key not in contract.axes:
                raise CaseIdError(f"{case_id!r}: {key!r} is not an axis of {contract_id}")
            axis = contract.axes[key]
            val: Any = int(value) if isinstance(axis[0], int) else value
            if val not in axis:
                raise CaseIdError(f"{case_id!r}: {key}={value} is not a value of axis {key} {list(axis)}")
            typed.append((key, val))
        keys = tuple(k for k, _ in typed)
        if keys not in (contract.kernel_axes, contract.axis_order):
            raise CaseIdError(f"{case_id!r}: parameters must be {','.join(contract.kernel_axes)} (a kernel "
                              f"check) or {','.join(contract.axis_order)} (a run case), in the contract's axis order")
        case = Case(contract, backend, tuple(typed))
    if case.id != case_id:
        raise CaseIdError(f"{case_id!r}: parameters out of the contract's axis order ({case.id})")
    return case


def group_by_kernel(cases: Iterable[Case]) -> Iterator[tuple[coop.KernelSpec, list[Case]]]:
    """Run cases grouped by kernel spec, in first-seen order (one compile, one launch each)."""
    groups: dict[coop.KernelSpec, list[Case]] = {}
    for case in cases:
        groups.setdefault(case.spec, []).append(case)
    yield from groups.items()
