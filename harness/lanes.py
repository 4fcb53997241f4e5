"""Lanes and which cases each runs: host lanes compile and inspect, launch lanes run kernels."""

from __future__ import annotations

from harness.cases import Case, expand, kernel_points, reject_case
from harness.contracts import Contract

#: lane -> whether it launches kernels (and so runs the run cases).
LANES = {"host": False, "simulator": True, "gpu": True}
SANITIZER_TOOLS = ("racecheck", "memcheck", "initcheck", "synccheck")
#: Set by the nightly runner: the folder where a lane must leave its journals.
LANE_OUT_ENV = "COOP_LANE_OUT"


def lane_kind(lane: str) -> str:
    """'gpu-racecheck' -> 'gpu'; sanitizer lanes run the gpu cases under a tool."""
    base, _, tool = lane.partition("-")
    if base not in LANES or (tool and (base != "gpu" or tool not in SANITIZER_TOOLS)):
        lanes = ", ".join([*LANES, *(f"gpu-{t}" for t in SANITIZER_TOOLS)])
        raise ValueError(f"unknown lane {lane!r}; lanes: {lanes}")
    return base


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
