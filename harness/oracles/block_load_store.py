"""Oracle for block Load and Store: builds one batched launch's inputs, its expected output, and judges it.

Each case runs once per data pattern (:mod:`harness.oracles.values`), each one block of the launch, in a
block order drawn from the seed. Everything is computed for the whole launch at once; per-element detail
and diagnosis are built only for failing cases.

Worked example (Load, 2 threads, ipt=2, striped, valid_items=3, no oob_default): rank 0 owns tile
indices 0 and 2, rank 1 owns 1 and 3, so the payload out is [src[0], src[2], src[1], init[3]]:
slot 3 is invalid and must keep its own earlier value.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import coopcheck
import numpy as np
import numpy.typing as npt
from coopcheck.load_store import check_spec

from harness.cases import Case
from harness.oracles import diagnose
from harness.oracles.diagnose import DIAGNOSES as DIAGNOSES  # the oracle's diagnoses (harness.families.Oracle)
from harness.oracles.judging import MAX_DETAIL, Judging
from harness.oracles.judging import show as _show  # noqa: F401  (tests read values as the details show them)
from harness.oracles.launch import Launch as Launch
from harness.oracles.launch import Verdict as Verdict
from harness.oracles.launch import block_order
from harness.oracles.values import fill, patterns, raw_view

Batch = coopcheck.LoadBatch | coopcheck.StoreBatch
Array = npt.NDArray[np.generic]
#: Spare elements per block region: room for the largest offset class (32) plus alignment.
REGION_SLACK = 32
REGION_ALIGN = 16

PLACED, UNTOUCHED, OOB_FILL, PREFIX, ELSEWHERE, INPUTS, ABI = range(7)
CHECK_NAMES = {
    PLACED: "valid-items-placed",
    UNTOUCHED: "invalid-slots-untouched",
    OOB_FILL: "oob-default-fills",
    PREFIX: "valid-prefix-written",
    ELSEWHERE: "nothing-else-written",
    INPUTS: "inputs-unmodified",
    ABI: "output-abi",
}
CHECKS = frozenset(CHECK_NAMES.values())
#: Checks of the element-wise comparison of the output (the ones a diagnosis explains).
OUTPUT_CHECKS = frozenset(CHECK_NAMES[c] for c in (PLACED, UNTOUCHED, OOB_FILL, PREFIX, ELSEWHERE))
WHY = {
    PLACED: "valid item",
    UNTOUCHED: "slot left as it was",
    OOB_FILL: "oob_default",
    PREFIX: "valid item stored",
    ELSEWHERE: "element left as it was",
}
#: The algorithms of the family (harness.families.Oracle), and its own axes: none past the common ones.
ALGORITHMS = coopcheck.ALGORITHMS
AXES: dict[str, tuple[str, ...]] = {}
#: The launch's inputs per operation: a launch must leave every one of them as it was.
INPUT_FIELDS = {"block.load": ("src", "init", "valid", "offset", "has_oob", "oob"),
                "block.store": ("items", "valid", "offset")}


def check_static(spec: coopcheck.KernelSpec) -> None:
    """The family's static rules (:mod:`coopcheck.load_store`): what every backend refuses at compile time."""
    check_spec(spec)


def axes_problem(operation: str, axes: Mapping[str, Sequence[Any]]) -> str | None:
    """Store takes no oob_default, so a Store contract's oob belongs in a reject case, not an axis."""
    return "Store takes no oob_default: move it to a reject case" if operation == "block.store" and "oob" in axes \
        else None


def region(spec: coopcheck.KernelSpec) -> int:
    """Elements per block region of src (Load) or dst (Store); keeps every block 16-byte aligned."""
    return -(-(spec.tile + REGION_SLACK) // REGION_ALIGN) * REGION_ALIGN


def tile_index(spec: coopcheck.KernelSpec, algorithm: str | None = None,
               y_major: bool = False) -> npt.NDArray[np.int64]:
    """Tile index of payload slot (rank, i), flattened in slot order rank*ipt + i.

    ``algorithm`` and ``y_major`` give the index a known wrong implementation computes (diagnosis).
    """
    ipt, threads = spec.items_per_thread, spec.threads
    rank = np.arange(threads)
    if y_major:
        bx, by, bz = (*spec.block, 1, 1)[:3]
        z, y, x = np.indices((bz, by, bx)).reshape(3, -1)  # the thread that the ABI ranks r ...
        rank = y + by * (x + bx * z)  # ... as a y-fastest primitive ranks it
    idx = (rank[:, None] + np.arange(ipt)[None, :] * threads if (algorithm or spec.algorithm) == "striped"
           else rank[:, None] * ipt + np.arange(ipt)[None, :])
    return idx.reshape(-1).astype(np.int64)


def n_codes(spec: coopcheck.KernelSpec) -> int:
    """Distinct elements of one block: every input element, sentinel and the oob default."""
    return region(spec) + spec.tile + (1 if spec.operation == "block.load" else 0)


def blocks_per_case(spec: coopcheck.KernelSpec) -> int:
    return len(patterns(spec.dtype, n_codes(spec)))


def build(spec: coopcheck.KernelSpec, cases: Sequence[Case], global_seed: int) -> Launch:
    """Inputs of one launch: every value drawn from its case's seed and pattern, never from the launch."""
    names = patterns(spec.dtype, n_codes(spec))
    seed, order = block_order(global_seed, cases, len(names))
    case_of_block, pattern_of_block = order // len(names), order % len(names)
    seeds = np.array([c.seed(global_seed) for c in cases], dtype=np.uint64)[case_of_block]
    valid = np.array([c.valid_items() for c in cases], dtype=np.int32)[case_of_block]
    offset = np.array([c.offset() for c in cases], dtype=np.int64)[case_of_block]
    reg, tile = region(spec), spec.tile

    def role(name: str, first: int, count: int) -> np.ndarray:
        codes = np.arange(first, first + count, dtype=np.int64)
        return fill(spec.dtype, pattern_of_block, name, seeds, codes, names)  # type: ignore[arg-type]

    batch: Batch
    if spec.operation == "block.load":
        batch = coopcheck.LoadBatch(
            src=role("src", 0, reg).reshape(-1), init=role("sentinel", reg, tile).reshape(-1), valid=valid,
            offset=offset, has_oob=np.array([c.has_oob() for c in cases], dtype=np.int32)[case_of_block],
            oob=role("oob", reg + tile, 1).reshape(-1), region=reg)
    else:
        batch = coopcheck.StoreBatch(items=role("src", 0, tile).reshape(-1),
                                     dst=role("sentinel", tile, reg).reshape(-1),
                                     valid=valid, offset=offset, region=reg)
    return Launch(spec, tuple(cases), batch, case_of_block, pattern_of_block, names, seed)


def snapshot(batch: Batch) -> Batch:
    """A deep copy taken before the launch: the oracle judges from it, never from what the launch saw."""
    return copy.deepcopy(batch)


@dataclass(frozen=True)
class Params:
    """The per-block parameters the expected output is a function of (a diagnosis varies them)."""

    valid: npt.NDArray[np.int64]
    offset: npt.NDArray[np.int64]
    has_oob: npt.NDArray[np.bool_]
    idx: npt.NDArray[np.int64]  # tile index per payload slot
    moved: Callable[[np.ndarray], np.ndarray] | None = None  # what happens to a moved item


def params_of(spec: coopcheck.KernelSpec, batch: Batch) -> Params:
    has_oob = (np.asarray(batch.has_oob) != 0 if isinstance(batch, coopcheck.LoadBatch)
               else np.zeros(batch.n_blocks, bool))
    return Params(np.asarray(batch.valid, dtype=np.int64), np.asarray(batch.offset, dtype=np.int64), has_oob,
                  tile_index(spec))


def expected(spec: coopcheck.KernelSpec, snap: Batch, p: Params,
             rows: npt.NDArray[np.int64] | None = None) -> np.ndarray:
    """The expected output of blocks ``rows`` (default: every block), one row each, from the pre-launch
    snapshot. Blocks are taken by offset class (a launch has a handful): each class is a window of
    contiguous columns, so the work is a few passes over the output with no per-element index arithmetic."""
    tile, reg, n = spec.tile, snap.region, snap.n_blocks
    sel = np.arange(n) if rows is None else rows
    valid, offset = p.valid[sel], p.offset[sel]
    if isinstance(snap, coopcheck.LoadBatch):
        src, init = np.asarray(snap.src).reshape(n, reg), np.asarray(snap.init).reshape(n, tile)
        out = init[sel]
        oob_rows = np.flatnonzero(p.has_oob[sel])
        out[oob_rows] = np.asarray(snap.oob)[sel[oob_rows], None]
        at = np.minimum(p.idx, tile - 1)
        for o in np.unique(offset):
            r = np.flatnonzero(offset == o)
            items = src[sel[r, None], np.clip(o + at, 0, reg - 1)[None, :]]
            items = p.moved(items) if p.moved else items
            out[r] = np.where(p.idx[None, :] < valid[r, None], items, out[r])
        return out
    items, dst = np.asarray(snap.items).reshape(n, tile), np.asarray(snap.dst).reshape(n, reg)
    slot_of_index = np.empty(tile, dtype=np.int64)
    slot_of_index[p.idx] = np.arange(tile)
    out = dst[sel]
    for o in np.unique(offset):
        r = np.flatnonzero(offset == o)
        lo, hi = max(int(o), 0), min(int(o) + tile, reg)  # the columns this class can write
        if lo >= hi:
            continue
        k = np.arange(lo, hi) - o  # tile index stored at each column
        stored = items[sel[r, None], slot_of_index[k][None, :]]
        stored = p.moved(stored) if p.moved else stored
        out[r, lo:hi] = np.where(k[None, :] < valid[r, None], stored, out[r, lo:hi])
    return out


def check_ids(spec: coopcheck.KernelSpec, snap: Batch, rows: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
    """The check each element of blocks ``rows`` is judged by (only failing blocks need them)."""
    p = params_of(spec, snap)
    valid = p.valid[rows, None]
    if isinstance(snap, coopcheck.LoadBatch):
        placed = p.idx[None, :] < valid
        return np.where(placed, PLACED, np.where(p.has_oob[rows, None], OOB_FILL, UNTOUCHED))
    k = np.arange(snap.region)[None, :] - p.offset[rows, None]
    return np.where((k >= 0) & (k < valid), PREFIX, ELSEWHERE)


def out_length(spec: coopcheck.KernelSpec, batch: Batch) -> int:
    """Elements of ``dst`` per block (the ABI of ``coopcheck.adapter``)."""
    return spec.tile if isinstance(batch, coopcheck.LoadBatch) else batch.region


def abi_problem(spec: coopcheck.KernelSpec, batch: Batch, out: object) -> str | None:
    """Why ``out`` is not the ABI's ``dst`` (an ndarray of the spec's dtype, native order, one row per block)."""
    return JUDGING.abi_problem(spec, batch, out)


def compare(spec: coopcheck.KernelSpec, snap: Batch, out: np.ndarray) -> tuple[np.ndarray, np.ndarray,
                                                                            npt.NDArray[np.bool_]]:
    """(output, expected output, wrong) per block and element: one bit-exact comparison."""
    got = out.reshape(snap.n_blocks, -1)
    want = expected(spec, snap, params_of(spec, snap))
    wrong = raw_view(np.ascontiguousarray(got)) != raw_view(np.ascontiguousarray(want))
    return got, want, wrong


JUDGING = Judging(check_names=CHECK_NAMES, why=WHY, input_fields=lambda spec: INPUT_FIELDS[spec.operation],
                  inputs_check=CHECK_NAMES[INPUTS], abi_check=CHECK_NAMES[ABI], diagnoses=diagnose.DIAGNOSES,
                  out_length=out_length, compare=compare, check_ids=check_ids, explain=diagnose.explain)


def judge(launch: Launch, snap: Batch, out: object) -> list[Verdict]:
    """Every case's verdict (in case order) from the output and what the launch left in its inputs."""
    return JUDGING.judge(launch, snap, out)


def block_failures(spec: coopcheck.KernelSpec, snap: Batch, out: object, limit: int = MAX_DETAIL) -> list[str]:
    """One line per wrong block of a hand-built launch (the backends' own runtime tests), from the snapshot
    of its inputs taken before the launch; an output off the ABI is one line."""
    def describe(b: int) -> str:
        return f"valid {int(np.asarray(snap.valid)[b])}, offset {int(np.asarray(snap.offset)[b])}"

    return JUDGING.block_failures(spec, snap, out, describe, limit)
