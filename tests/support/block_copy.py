"""A test-only operation family, block Copy: its kernel ABI, its oracle, and the model backend's kernel builder.

It proves that a family plugs in by data: ``families/block_copy.toml`` names this module as its oracle, and
no file of the engine, journal, sanitizer, expectations, reports or pytest plugin knows it.

Kernel ABI (grid = ``n_blocks`` x 1 x 1, block = ``spec.block``, ``tile = threads * ipt``): thread ``rank``
of block ``b`` copies ``src[b*region + offset[b] + rank*ipt + i]`` to ``dst[b*tile + rank*ipt + i]``.

Worked example: 2 threads, ipt=1, region 4, offset [1]: src [10, 11, 12, 13] gives dst [11, 12].
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import coopcheck
import numpy as np

from harness.cases import Case
from harness.oracles.launch import PASSED, Launch, Verdict, block_order
from harness.oracles.values import raw_view

OPERATION = "block.copy"
CHECKS = frozenset({"tile-copied"})
OUTPUT_CHECKS = CHECKS
DIAGNOSES = {"offset-ignored": "the offset ignored (the tile read from the region's start)"}
ALGORITHMS = ("direct",)
AXES: dict[str, tuple[str, ...]] = {}
REGION_SLACK = 32


@dataclass
class CopyBatch:
    """Arguments of one batched Copy launch."""

    src: Any  # dtype[n_blocks * region]
    offset: Any  # int64[n_blocks]
    region: int

    @property
    def n_blocks(self) -> int:
        return len(self.offset)


def check_static(spec: coopcheck.KernelSpec) -> None:
    if spec.items_per_thread < 1:
        raise coopcheck.InvalidParameter("items_per_thread", f"items_per_thread must be >= 1 (got "
                                         f"{spec.items_per_thread})")


def axes_problem(operation: str, axes: Mapping[str, Sequence[Any]]) -> str | None:
    return None


def blocks_per_case(spec: coopcheck.KernelSpec) -> int:
    return 1


def build(spec: coopcheck.KernelSpec, cases: Sequence[Case], global_seed: int) -> Launch:
    """One block per case, its src random bits drawn from the case's seed."""
    seed, order = block_order(global_seed, cases, 1)
    region = spec.tile + REGION_SLACK
    dtype = np.dtype(spec.dtype)
    src = b"".join(np.random.default_rng(cases[c].seed(global_seed)).bytes(region * dtype.itemsize) for c in order)
    batch = CopyBatch(np.frombuffer(src, dtype=dtype).copy(),
                      np.array([cases[c].offset() for c in order], dtype=np.int64), region)
    return Launch(spec, tuple(cases), batch, order, np.zeros(len(order), np.int64), ("random",), seed)


def snapshot(batch: CopyBatch) -> CopyBatch:
    return copy.deepcopy(batch)


def expected(spec: coopcheck.KernelSpec, snap: CopyBatch, offset: np.ndarray) -> np.ndarray:
    src = np.asarray(snap.src).reshape(snap.n_blocks, snap.region)
    return src[np.arange(snap.n_blocks)[:, None], offset[:, None] + np.arange(spec.tile)[None, :]]


def judge(launch: Launch, snap: CopyBatch, out: object) -> list[Verdict]:
    """Bit-exact per block; a wrong block that the offset-ignoring copy explains says so."""
    spec, n = launch.spec, snap.n_blocks
    if not isinstance(out, np.ndarray) or out.dtype != np.dtype(spec.dtype) or out.shape != (n * spec.tile,):
        return [Verdict(("tile-copied",), (), f"launch returned {out!r:.60}, not {spec.dtype}[{n * spec.tile}]")] \
            * len(launch.cases)
    got = raw_view(out.reshape(n, -1))
    wrong = (got != raw_view(expected(spec, snap, np.asarray(snap.offset)))).any(axis=1)
    ignored = (got == raw_view(expected(spec, snap, np.zeros(n, np.int64)))).all(axis=1)
    verdicts = [PASSED] * len(launch.cases)
    for b in np.flatnonzero(wrong):
        diagnoses = ("offset-ignored",) if ignored[b] else ()
        verdicts[int(launch.case_of_block[b])] = Verdict(("tile-copied",), diagnoses, f"block {b}: tile not copied")
    return verdicts


class CopyModel:
    """The model backend's kernel builder of this family: the ABI above, in NumPy."""

    def compile(self, spec: coopcheck.KernelSpec) -> coopcheck.KernelSpec:
        check_static(spec)
        return spec

    def launch(self, spec: coopcheck.KernelSpec, batch: CopyBatch) -> np.ndarray:
        return expected(spec, batch, np.asarray(batch.offset)).reshape(-1)
