"""Specializations that differ only in axes a device function does not read share that compiled device function.

Type inference is most of numba's compile time (about three quarters of a Scan kernel's), and it runs once per
device function object and signature: a factory that built a new operator, doubling scan or segment finder for
every specialization had each kernel type all of them again. Built once per argument tuple, they are typed by the
first kernel of a worker that needs them; the next specialization of the same dtype and operator types only its
own kernel and top-level function (a contiguous slice of 386 full-profile kernel points of the four reduce and
scan families: 157.6 s of compile on the host before, 103.9 s after). A new object per call shows here as a device
function with no compiled overload after a kernel that calls it was built.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import coopcheck
import pytest
from coopcheck_numba import exchange, kernels, reduce, scan, warp_reduce
from coopcheck_numba.adapter import NumbaAdapter

from .conftest import ARCH

DTYPE = "int32"


def _scan_parts() -> list[Any]:
    op = reduce.operator(DTYPE, "sum")
    return [op, scan._doubling(op, scan._barrier), scan._raking(op, scan._barrier)]


def _reduce_parts() -> list[Any]:
    op = reduce.operator(DTYPE, "max")
    return [op, reduce._tree(op), reduce._raking(op)]


#: family -> (two kernel specs that differ in an axis the parts do not read, the parts both call).
CASES: dict[str, tuple[tuple[coopcheck.KernelSpec, ...], Callable[[], list[Any]]]] = {
    "scan": (tuple(coopcheck.KernelSpec("block.scan", DTYPE, (64,), 2, "raking",
                                        variant=(("op", "sum"), ("mode", mode), ("seed", "none")))
                   for mode in ("inclusive", "exclusive")), _scan_parts),
    "reduce": (tuple(coopcheck.KernelSpec("block.reduce", DTYPE, (64,), ipt, "raking", variant=(("op", "max"),))
                     for ipt in (1, 3)), _reduce_parts),
    "warp_reduce": (tuple(coopcheck.KernelSpec("warp.reduce", DTYPE, (64,), 1, "any",
                                               variant=(("width", "8"), ("op", op), ("mode", "head")))
                          for op in ("sum", "min")), lambda: [warp_reduce._segment_end(8, "head")]),
    "exchange": (tuple(coopcheck.KernelSpec("block.exchange", dtype, (64,), 2, "striped_to_blocked",
                                            variant=(("slicing", "off"), ("output", "separate")))
                       for dtype in ("int32", "float64")),
                 lambda: [exchange._store_step("striped_to_blocked", 2), exchange._load_step("striped_to_blocked", 2),
                          kernels._write_back(2, False)]),
}


@pytest.mark.parametrize("family", CASES)
def test_two_specializations_call_one_compiled_copy_of_the_device_functions_they_share(
        adapter: NumbaAdapter, family: str) -> None:
    specs, parts = CASES[family]
    for spec in specs:
        adapter.compile(spec, arch=ARCH)
    untyped = [part.py_func.__qualname__ for part in parts() if not part.overloads]
    assert untyped == [], f"built anew for each specialization (a kernel typed a copy of each): {untyped}"
