"""Test-only broken variants of the cutlass block Load, Exchange, Shuffle, Reduce and Scan, to prove that the resource
checks and racecheck bite. Each is the real device code with one decision flipped while the kernel is traced:

* ``transpose_without_barrier``: every block barrier traced away (the transpose's, a block Exchange's, a
  Shuffle's, a Reduce's or a Scan's); racecheck must report the exchange, and the host rules requiring ``BAR`` must
  flag it.
* ``direct_through_shared``: direct staged through the transpose's shared scratch and barriers;
  its results are right, but the host rules for ``direct`` must flag it.

Run as a script on a GPU, it launches the racy transpose (or the real one) under the contract ABI,
for compute-sanitizer (from backends/cutlass/tests); ``exchange-racy`` and ``exchange-control`` do the same
for a block Exchange (striped_to_blocked over 4 warps), ``shuffle-racy`` and ``shuffle-control`` for a Shuffle
(rotate over 4 warps, by every distance of its kernel point), ``reduce-racy`` and ``reduce-control`` for a Reduce
(raking max over 4 warps, every valid_items class of its kernel point), ``scan-racy`` and ``scan-control`` for a Scan
(raking inclusive max over 4 warps with the prefix callback, every seed value of its kernel point)::

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
SHUFFLE = coopcheck.KernelSpec("block.shuffle", "int32", (128,), 1, "rotate", variant=(("output", "inplace"),))
REDUCE = coopcheck.KernelSpec("block.reduce", "int32", (128,), 4, "raking", variant=(("op", "max"),))
SCAN = coopcheck.KernelSpec("block.scan", "int32", (16, 8), 4, "raking",
                            variant=(("op", "max"), ("mode", "inclusive"), ("seed", "prefix")))
#: The family probes: mode prefix -> the specialization it launches.
FAMILY_PROBES = {"exchange": EXCHANGE, "shuffle": SHUFFLE, "reduce": REDUCE, "scan": SCAN}


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
    partial tiles, or the racy Exchange, Shuffle, Reduce or Scan or the real one; print how many slots came out
    wrong (a race may or may not corrupt)."""
    modes = ["racy", "control", *(f"{family}-{kind}" for family in FAMILY_PROBES for kind in ("racy", "control"))]
    if len(argv) != 1 or argv[0] not in modes:
        print(f"usage: mutants.py {'|'.join(modes)}", file=sys.stderr)
        return 2
    family, _, kind = argv[0].rpartition("-")
    if family:
        return _family_probe(FAMILY_PROBES[family], kind == "racy")
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


def _family_probe(spec: coopcheck.KernelSpec, racy: bool) -> int:
    """Launch ``spec``'s contract kernel (without its barriers when ``racy``) over every case of its kernel point,
    judged by its family's oracle."""
    from harness.cases import point_cases
    from harness.contracts import load_contracts

    contract = {c.id: c for c in load_contracts()}[spec.operation]
    oracle: Any = contract.oracle  # the family's oracle module (its compare too)
    point = (("dtype", spec.dtype), ("block", "x".join(map(str, spec.block))), ("ipt", spec.items_per_thread),
             ("alg", spec.algorithm), *spec.variant)
    cases = point_cases(contract, "cutlass", point)
    launch = oracle.build(cases[0].spec, cases, 0)
    adapter, compiled = compile_mutant(transpose_without_barrier if racy else nullcontext, spec)
    before = oracle.snapshot(launch.batch)
    wrong = int(oracle.compare(spec, before, adapter.launch(compiled, spec, launch.batch))[2].sum())
    family = spec.operation.removeprefix("block.")
    print(f"{family}-{'racy' if racy else 'control'}: {compiled.artifacts.kernel_name}, {wrong} slots wrong")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
