"""Every specialization (operation x dtype x items_per_thread x algorithm) compiles for sm_90 without
a GPU, within PTX 9.0, names its specialization, and meets its contract's resource rules.

The 770 specializations take about a second each; a covering quarter (every dtype, every
items_per_thread, both operations with every algorithm) runs by default, the rest is ``slow``.
"""

from __future__ import annotations

from itertools import product
from typing import Any

import coopcheck
import pytest
from coopcheck_numba.adapter import NumbaAdapter
from coopcheck_numba.toolchain import MAX_PTX_VERSION, ptx_version

from harness.inspect import inspect_artifacts, resource_violations

ARCH = "sm_90"
IPTS = (1, 2, 3, 4, 7, 8, 16)
COMBOS = list(product(coopcheck.OPERATIONS, coopcheck.ALGORITHMS))


def _quick(combo: int, dtype: int, ipt: int) -> bool:
    # Four (dtype, ipt) pairs per (operation, algorithm), walking both axes so that every dtype and
    # every items_per_thread is compiled at least once per operation.
    return any(dtype == (4 * combo + k) % len(coopcheck.DTYPES) and ipt == (3 * combo + k) % len(IPTS)
               for k in range(4))


def _params() -> list[Any]:
    return [
        pytest.param(coopcheck.KernelSpec(op, dtype, (128,), ipt, alg), id=f"{op}-{dtype}-ipt{ipt}-{alg}",
                     marks=() if _quick(c, d, p) else pytest.mark.slow)
        for c, (op, alg) in enumerate(COMBOS)
        for d, dtype in enumerate(coopcheck.DTYPES)
        for p, ipt in enumerate(IPTS)
    ]


PARAMS = _params()


def test_quick_set_covers_every_axis_value() -> None:
    quick = [p.values[0] for p in PARAMS if not p.marks]
    for operation in coopcheck.OPERATIONS:
        mine = [s for s in quick if s.operation == operation]
        assert {s.dtype for s in mine} == set(coopcheck.DTYPES)
        assert {s.items_per_thread for s in mine} == set(IPTS)
        assert {s.algorithm for s in mine} == set(coopcheck.ALGORITHMS)
    print(f"compile set: {len(quick)} of {len(PARAMS)} specializations by default, the rest marked slow")


@pytest.mark.parametrize("spec", PARAMS)
def test_compiles_for_sm90(adapter: NumbaAdapter, spec: coopcheck.KernelSpec) -> None:
    artifacts = adapter.artifacts(adapter.compile(spec, arch=ARCH))
    assert artifacts.ptx is not None and artifacts.cubin is not None
    assert ptx_version(artifacts.ptx) <= MAX_PTX_VERSION
    assert f".target {ARCH}" in artifacts.ptx
    assert coopcheck.kernel_symbol(spec) in artifacts.kernel_name
    assert artifacts.cubin[:4] == b"\x7fELF"


@pytest.mark.parametrize("spec", PARAMS)
def test_meets_the_contract_resource_rules(adapter: NumbaAdapter, resources: dict[str, Any],
                                           spec: coopcheck.KernelSpec) -> None:
    report = inspect_artifacts(adapter.artifacts(adapter.compile(spec, arch=ARCH)))
    assert resource_violations(report, spec.algorithm, resources[spec.operation]) == []
