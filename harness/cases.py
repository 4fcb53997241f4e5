"""Cases: expansion of a contract's axes into canonical cases, the two profiles, and seeds.

A case is one contract x backend x kernel point x case point (or one rejection). Kernel points
compile once; all case points of a kernel point ride in one batched launch.
"""

from __future__ import annotations

import hashlib
import itertools
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import cache, cached_property
from typing import Any

import coopcheck
import numpy as np
from coopcheck.vocabulary import STATIC_RULES

from harness import caseid
from harness.boundaries import valid_value
from harness.contracts import Contract, RejectCase, kernel_spec
from harness.errors import CaseIdError

PROFILES = ("full", "pr", "smoke")
#: Covering strength per sub-profile: pr holds every pair of values of every two kernel axes (and every combination
#: of values a rule speaks of), smoke every value of every kernel axis (for the slow host executors: numba's CUDA
#: simulator runs a thread a time).
COVERING = {"pr": 2, "smoke": 1}
#: The valid_items boundaries the smoke profile keeps (the simulator's budget): the edges of the tile, one
#: past a thread's share of the block and of a warp's, one random value.
SMOKE_VALID = ("full", "zero", "one", "tile-1", "threads+1", "warp+1", "rand.1")
#: The global seed unless a run names another; every case seed derives from it and the case id.
DEFAULT_SEED = 20261129
#: Element offsets of the offset classes: 32 elements is 16-byte aligned for every dtype.
OFFSET_ELEMENTS = {"zero": 0, "aligned": 32, "misaligned": 1}


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

    @cached_property  # read several times per case (building, judging, seeding valid_items)
    def spec(self) -> coopcheck.KernelSpec:
        return kernel_spec(self.contract.operation, dict(self.params), self.contract.statics,
                           self.contract.variant_axes)

    def seed(self, global_seed: int) -> int:
        """Deterministic per-case seed: the same id and global seed always draw the same data."""
        digest = hashlib.sha256(f"{global_seed}:{self.id}".encode()).digest()
        return int.from_bytes(digest[:8], "little")

    def valid_items(self) -> int:
        """The case's valid_items: its boundary's value in this kernel point (see :func:`valid_value`)."""
        return valid_value(self["valid"], self.spec, self.point_key)

    @property
    def point_key(self) -> str:
        """The kernel point without the backend: it seeds the same case values on every backend."""
        return self.contract.id + ":" + ",".join(f"{k}={v}" for k, v in self.params if k in self.contract.kernel_axes)

    @cached_property
    def kernel_id(self) -> str:
        """The id of the case's kernel point (its kernel-axis prefix): the id of its group."""
        kernel = [(k, v) for k, v in self.params if k in self.contract.kernel_axes]
        return caseid.render(self.contract.id, self.backend, kernel)

    def offset(self) -> int:
        return OFFSET_ELEMENTS[self["offset"]]

    def case_values(self) -> dict[str, Any]:
        """The case axes as a kernel receives them: valid_items and offset in elements, the others as named."""
        resolved = {"valid": self.valid_items, "offset": self.offset}
        return {k: resolved[k]() if k in resolved else v for k, v in self.params if k in self.contract.case_axes}

    def has_oob(self) -> bool:
        return dict(self.params).get("oob") == "value"


def point_valid_names(contract: Contract, point: tuple[tuple[str, Any], ...]) -> tuple[str, ...]:
    """The valid names one kernel point runs: those inside [0, tile], the first name per distinct value."""
    probe = Case(contract, "_", point)
    spec, key = probe.spec, probe.point_key
    seen: set[int] = set()
    kept = []
    for name in contract.axes.get("valid", ()):
        value = valid_value(name, spec, key)
        if 0 <= value <= spec.tile and value not in seen:
            seen.add(value)
            kept.append(name)
    return tuple(kept)


def _kernel_ok(contract: Contract, point: dict[str, Any]) -> bool:
    """False for points an excluded static rule rejects; other rule breaks are contract bugs."""
    try:
        contract.oracle.check_static(kernel_spec(contract.operation, point, (), contract.variant_axes))
    except coopcheck.InvalidParameter as exc:
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
    grid, codes = _valid_grid(contract)
    if profile == "full":
        return grid
    pairs = _combinations(codes, COVERING[profile])
    chosen = _covering(pairs)
    if profile == "pr":
        chosen += _rule_points(contract, grid, pairs, chosen)
    return tuple(grid[i] for i in chosen)


@cache
def _valid_grid(contract: Contract) -> tuple[tuple[tuple[tuple[str, Any], ...], ...], np.ndarray]:
    """Every valid kernel point in product order, and (point, axis) the index of its value in that axis's list (each
    profile starts from this grid: a contract's static rules are asked once per point, not once per profile)."""
    axes = contract.kernel_axes
    points = [tuple(zip(axes, values, strict=True)) for values in itertools.product(*(contract.axes[a] for a in axes))]
    keep = [i for i, point in enumerate(points) if _kernel_ok(contract, dict(point))]
    codes = np.indices([len(contract.axes[a]) for a in axes]).reshape(len(axes), -1).T  # in product order too
    return tuple(points[i] for i in keep), codes[keep]


def _combinations(codes: np.ndarray, strength: int) -> np.ndarray:
    """(point, k) the index of the k-th combination of ``strength`` kernel axes' values that a grid point holds
    (``codes``: its value index per axis). Combinations of different axes, or values, get different indices."""
    sizes = codes.max(axis=0, initial=0) + 1
    columns, offset = [], 0
    for axes in itertools.combinations(range(codes.shape[1]), strength):
        combined = np.zeros(len(codes), dtype=np.int64)
        for axis in axes:
            combined = combined * sizes[axis] + codes[:, axis]
        columns.append(combined + offset)
        offset += int(np.prod(sizes[list(axes)]))
    stacked = np.stack(columns, axis=1) if columns else np.zeros((len(codes), 0), dtype=np.int64)
    return np.unique(stacked, return_inverse=True)[1].reshape(stacked.shape)  # dense: every index some point holds


def _covering(pairs: np.ndarray) -> list[int]:
    """A greedy deterministic covering of every combination of :func:`_combinations` that some valid kernel point
    holds (all-pairs for 2 axes): each step takes the first point covering the most uncovered."""
    uncovered = np.ones(int(pairs.max()) + 1, dtype=bool)
    chosen: list[int] = []
    while uncovered.any():
        best = int(np.argmax(uncovered[pairs].sum(axis=1)))  # argmax: the first of the best
        uncovered[pairs[best]] = False
        chosen.append(best)
    return chosen


def _rule_points(contract: Contract, grid: Sequence[tuple[tuple[str, Any], ...]], pairs: np.ndarray,
                 chosen: list[int]) -> list[int]:
    """The grid points pr adds so that some case holds every combination of the values a rule's ``when`` names
    that some case of the grid holds (all-pairs holds those of a rule of two axes, not of three): greedily, the
    point holding the most combinations left, of those the one whose pairs pr holds least often (a second look
    at the least tested), the first of those."""
    needed = [dict(zip(rule.when, values, strict=True))
              for rule in contract.rules for values in itertools.product(*rule.when.values())]
    left = [c for c in needed if not any(_point_holds(contract, grid[i], c) for i in chosen)]
    added: list[int] = []
    while left:
        holds = np.array([[_point_holds(contract, point, c) for c in left] for point in grid], dtype=bool)
        count = holds.sum(axis=1)
        if not count.any():  # what is left, no case holds: nothing to cover
            break
        seen = np.bincount(pairs[chosen + added].ravel(), minlength=int(pairs.max()) + 1)
        best = int(np.argmin(np.where(count == count.max(), seen[pairs].sum(axis=1), np.iinfo(np.int64).max)))
        added.append(best)
        left = [c for c, held in zip(left, holds[best], strict=True) if not held]
    return added


def _point_holds(contract: Contract, point: tuple[tuple[str, Any], ...], combination: dict[str, Any]) -> bool:
    """Whether some case of kernel point ``point`` holds ``combination`` (values of kernel and case axes)."""
    at = dict(point)
    for axis, value in combination.items():
        if axis in at:
            if at[axis] != value:
                return False
        elif value not in (point_valid_names(contract, point) if axis == "valid" else contract.case_values(axis, at)):
            return False
    return True


def expand(contract: Contract, backend: str, profile: str) -> list[Case]:
    """Every case of one contract for one backend and profile, rejections included."""
    cases = [case for point in kernel_points(contract, profile) for case in profile_cases(contract, backend, point,
                                                                                          profile)]
    for rej in contract.rejects:
        cases.append(reject_case(contract, backend, rej))
    check_unique(cases, contract)
    return cases


def point_cases(contract: Contract, backend: str, point: tuple[tuple[str, Any], ...]) -> list[Case]:
    """The run cases of one kernel point: every combination of the case-axis values that exist there."""
    case_axes, at = contract.case_axes, dict(point)
    axes = [point_valid_names(contract, point) if a == "valid" else contract.case_values(a, at) for a in case_axes]
    return [Case(contract, backend, point + tuple(zip(case_axes, values, strict=True)))
            for values in itertools.product(*axes)]


def profile_cases(contract: Contract, backend: str, point: tuple[tuple[str, Any], ...], profile: str) -> list[Case]:
    """The run cases of one kernel point that ``profile`` keeps: smoke keeps the :data:`SMOKE_VALID` boundaries
    of a contract with valid_items, every profile else all of them."""
    cases = point_cases(contract, backend, point)
    if profile == "smoke" and "valid" in contract.case_axes:
        return [case for case in cases if case["valid"] in SMOKE_VALID]
    return cases


def reject_case(contract: Contract, backend: str, rej: RejectCase) -> Case:
    p = rej.params
    params = [(a, p[a]) for a in contract.kernel_axes]
    params += [(k, p[k]) for k in contract.statics if k in p]
    params.append(("reject", rej.name))
    return Case(contract, backend, tuple(params), rej)


def check_unique(cases: Iterable[Case], contract: Contract) -> None:
    """Refuse a contract whose axes generate one id twice (the id keys everything)."""
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
        point = case.params[:len(contract.kernel_axes)]
        if "valid" in text and text["valid"] not in point_valid_names(contract, point):
            raise CaseIdError(f"{case_id!r}: valid={text['valid']} does not exist in this kernel point (tile "
                              f"{case.spec.tile}: outside [0, tile], or the value of an earlier name)")
        for name, value in case.params[len(contract.kernel_axes):]:
            if value not in contract.case_values(name, dict(point)):
                raise CaseIdError(f"{case_id!r}: {name}={value} does not exist in this kernel point (the "
                                  f"contract's [[only]] tables)")
    if case.id != case_id:
        raise CaseIdError(f"{case_id!r}: parameters out of the contract's axis order ({case.id})")
    return case


def group_by_kernel(cases: Iterable[Case]) -> Iterator[tuple[coopcheck.KernelSpec, list[Case]]]:
    """Run cases grouped by kernel spec, in first-seen order (one compile, one launch each)."""
    groups: dict[coopcheck.KernelSpec, list[Case]] = {}
    for case in cases:
        groups.setdefault(case.spec, []).append(case)
    yield from groups.items()
