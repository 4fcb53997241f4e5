"""Test-only broken variants of the cutlass block Load and Exchange, to prove that the resource checks and
racecheck bite. Each is the real device code with one decision flipped while the kernel is traced:

* ``transpose_without_barrier``: every block barrier traced away (the transpose's, or a block Exchange's);
  racecheck must report the exchange, and the host rules requiring ``BAR`` must flag it.
* ``direct_through_shared``: direct staged through the transpose's shared scratch and barriers;
  its results are right, but the host rules for ``direct`` must flag it.

Run as a script on a GPU, it launches the racy transpose (or the real one) under the contract ABI,
for compute-sanitizer (from backends/cutlass/tests); ``exchange-racy`` and ``exchange-control`` do the same
for a block Exchange (striped_to_blocked over 4 warps)::

    compute-sanitizer --tool racecheck --error-exitcode 1 python mutants.py racy     # must report
    compute-sanitizer --tool racecheck --error-exitcode 1 python mutants.py control  # must be clean
"""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from typing import Any
from unittest import mock

import coopcheck
import numpy as np
from coopcheck_cutlass.adapter import CompiledKernel, CutlassAdapter

ARCH = "sm_90"
#: The specialization both mutants imitate: 4 warps, so the exchange crosses warps.
TRANSPOSE = coopcheck.KernelSpec("block.load", "int32", (128,), 4, "transpose")
DIRECT = coopcheck.KernelSpec("block.load", "int32", (128,), 4, "direct")
EXCHANGE = coopcheck.KernelSpec("block.exchange", "int32", (128,), 4, "striped_to_blocked",
                                variant=(("slicing", "off"), ("output", "inplace")))


@contextmanager
def transpose_without_barrier() -> Iterator[None]:
    import cutlass.cute as cute

    with mock.patch.object(cute.arch, "sync_threads", lambda: None):
        yield


@contextmanager
def direct_through_shared() -> Iterator[None]:
    from coopcheck_cutlass import _exchange, block

    def staged(plan: Any, src: Any, items: Any, rank: Any, valid_items: Any, offset: Any, oob: Any) -> None:
        exchange = dataclasses.replace(plan, algorithm="transpose")
        scratch = block.allocate_temp_storage(exchange)
        _exchange.load(exchange, src, items, rank, valid_items, offset, oob, scratch)

    with mock.patch.object(block._per_thread, "load", staged):
        yield


def compile_mutant(mutant: Callable[[], AbstractContextManager[None]],
                   spec: coopcheck.KernelSpec) -> tuple[CutlassAdapter, CompiledKernel]:
    """Compile ``spec`` under ``mutant`` with an adapter of its own and no disk cache, so the
    mutant never reaches a cache that real compiles read."""
    adapter = CutlassAdapter(disk_cache=False)
    with mutant():
        return adapter, adapter.compile(spec, arch=ARCH)


def main(argv: list[str]) -> int:
    """Launch the racy transpose (``racy``) or the real one (``control``) over a few full and
    partial tiles, or the racy Exchange or the real one; print how many slots came out wrong (a race may
    or may not corrupt)."""
    if argv not in (["racy"], ["control"], ["exchange-racy"], ["exchange-control"]):
        print("usage: mutants.py racy|control|exchange-racy|exchange-control", file=sys.stderr)
        return 2
    if argv[0].startswith("exchange-"):
        return _exchange(argv[0] == "exchange-racy")
    from harness.oracles.block_load_store import compare, region, snapshot
    from harness.oracles.values import pattern

    spec = TRANSPOSE
    adapter, compiled = compile_mutant(transpose_without_barrier if argv == ["racy"] else nullcontext, spec)
    n, reg = 4, region(spec)
    batch = coopcheck.LoadBatch(
        src=np.concatenate([pattern(spec.dtype, reg, "src", b) for b in range(n)]),
        init=np.concatenate([pattern(spec.dtype, spec.tile, "sentinel", b) for b in range(n)]),
        valid=np.array([spec.tile, spec.tile - 1, spec.tile // 2, 1], np.int32),
        offset=np.zeros(n, np.int64), has_oob=np.zeros(n, np.int32),
        oob=pattern(spec.dtype, n, "oob", 0), region=reg,
    )
    before = snapshot(batch)
    wrong = int(compare(spec, before, adapter.launch(compiled, spec, batch))[2].sum())
    print(f"{argv[0]}: {compiled.artifacts.kernel_name}, {wrong} of {n * spec.tile} payload slots wrong")
    return 0


def _exchange(racy: bool) -> int:
    from harness.cases import point_cases
    from harness.contracts import load_contracts
    from harness.oracles import block_exchange as oracle

    spec = EXCHANGE
    contract = {c.id: c for c in load_contracts()}[spec.operation]
    point = (("dtype", spec.dtype), ("block", "128"), ("ipt", spec.items_per_thread), ("alg", spec.algorithm),
             *spec.variant)
    cases = point_cases(contract, "cutlass", point)
    launch = oracle.build(cases[0].spec, cases, 0)
    adapter, compiled = compile_mutant(transpose_without_barrier if racy else nullcontext, spec)
    before = oracle.snapshot(launch.batch)
    wrong = int(oracle.compare(spec, before, adapter.launch(compiled, spec, launch.batch))[2].sum())
    print(f"exchange-{'racy' if racy else 'control'}: {compiled.artifacts.kernel_name}, {wrong} slots wrong")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
