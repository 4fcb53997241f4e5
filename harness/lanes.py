"""Lanes and which cases each runs: host lanes compile and inspect, launch lanes run kernels."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import NamedTuple

import coopcheck

from harness.cases import Case, expand, kernel_points, profile_cases, reject_case
from harness.contracts import Contract

#: lane -> whether it launches kernels (and so runs the run cases).
LANES = {"host": False, "simulator": True, "gpu": True}
#: Lanes whose time is their launches, not their compiles: the simulator runs a Python thread per CUDA thread, so a
#: kernel point's cost grows with its block and tile, and the costly points of a contract sit together.
LAUNCH_BOUND = {"simulator"}
SANITIZER_TOOLS = ("racecheck", "memcheck", "initcheck", "synccheck")
#: Set by the nightly runner: the folder where a lane must leave its journals.
LANE_OUT_ENV = "COOP_LANE_OUT"
#: What each lane that ``python -m harness run`` runs checks, in the words a run announces it with.
LANE_WORK = {"host": "compile + resource checks", "simulator": "kernels run in numba's CUDA simulator, on the CPU",
             "gpu": "kernels run on the CUDA device"}
ALL_LANES = [*LANES, *(f"gpu-{t}" for t in SANITIZER_TOOLS)]


def lane_kind(lane: str) -> str:
    """'gpu-racecheck' -> 'gpu'; sanitizer lanes run the gpu cases under a tool."""
    base, _, tool = lane.partition("-")
    if base not in LANES or (tool and (base != "gpu" or tool not in SANITIZER_TOOLS)):
        raise ValueError(f"unknown lane {lane!r}; lanes: {', '.join(ALL_LANES)}")
    return base


def lanes_not_run(ran: str, gpu: bool) -> list[tuple[str, str]]:
    """Every lane but ``ran``, each with how to run it, or, without a CUDA device (``gpu`` False), what it needs."""
    how = {"host": "python -m harness run --lane host",
           "simulator": "NUMBA_ENABLE_CUDASIM=1 python -m harness run --lane simulator --backend numba --profile smoke",
           "gpu": "python -m harness run --lane gpu"}
    for tool in SANITIZER_TOOLS:  # the tox env of racecheck is plain gpu
        env = "gpu" if tool == "racecheck" else f"gpu-{tool}"
        how[f"gpu-{tool}"] = f"tox -e {env} (under compute-sanitizer {tool})"
    return [(lane, how[lane] if gpu or lane_kind(lane) != "gpu" else f"needs a CUDA device: {how[lane]}")
            for lane in ALL_LANES if lane != ran]


def kernel_cases(contract: Contract, backend: str, profile: str) -> list[Case]:
    """One compile-and-inspect check per kernel point; its id holds only the kernel axes."""
    return [Case(contract, backend, point) for point in kernel_points(contract, profile)]


def lane_cases(contract: Contract, backend: str, profile: str, lane: str) -> list[Case]:
    """The cases ``lane`` runs for one contract and backend, rejections first (they are cheap)."""
    rejects = [reject_case(contract, backend, r) for r in contract.rejects]
    if LANES[lane_kind(lane)]:
        return rejects + [c for c in expand(contract, backend, profile) if c.reject is None]
    return rejects + kernel_cases(contract, backend, profile)


def is_run_case(case: Case) -> bool:
    return case.reject is None and len(case.params) > len(case.contract.kernel_axes)


class LazyGroup(NamedTuple):
    """A kernel group of a lane, its cases made on demand: its spec, its kernel id (the id of its first case's
    kernel point: what a journal's group record names it by) and the makers of its cases, in run order."""

    spec: coopcheck.KernelSpec
    kernel: str
    makers: list[Callable[[], list[Case]]]


def lane_groups(contract: Contract, backend: str, profile: str, lane: str) -> list[LazyGroup]:
    """The kernel groups of :func:`lane_cases`, in the order ``harness.cases.group_by_kernel`` gives them, each
    with its cases unmade: a shard of a full lane runs one group in n, and making every case of the lane was
    most of its worker's start (7 s a backend). A group whose makers give no case is left to the caller."""
    units: list[tuple[Case, Callable[[], list[Case]]]] = [
        (case, partial(_listed, case)) for case in (reject_case(contract, backend, r) for r in contract.rejects)]
    for point in kernel_points(contract, profile):
        head = Case(contract, backend, point)  # the kernel check; every run case of the point shares its spec
        make: Callable[[], list[Case]] = (partial(profile_cases, contract, backend, point, profile)
                                          if LANES[lane_kind(lane)] else partial(_listed, head))
        units.append((head, make))
    groups: dict[coopcheck.KernelSpec, LazyGroup] = {}
    for head, make in units:
        groups.setdefault(head.spec, LazyGroup(head.spec, head.kernel_id, [])).makers.append(make)
    return list(groups.values())


def _listed(case: Case) -> list[Case]:
    return [case]
