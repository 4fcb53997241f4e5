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
from harness.oracles.launch import PASSED, block_order
from harness.oracles.launch import Launch as Launch
from harness.oracles.launch import Verdict as Verdict
from harness.oracles.values import fill, patterns, raw_view

Batch = coopcheck.LoadBatch | coopcheck.StoreBatch
Array = npt.NDArray[np.generic]
#: Spare elements per block region: room for the largest offset class (32) plus alignment.
REGION_SLACK = 32
REGION_ALIGN = 16
MAX_DETAIL = 8

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
    want = np.dtype(spec.dtype)
    length = batch.n_blocks * out_length(spec, batch)
    says = f"the ABI says {want.name}[{length}] in native byte order"
    if not isinstance(out, np.ndarray):
        return f"launch returned {type(out).__name__}, not a NumPy array; {says}"
    order = {"<": "little-endian", ">": "big-endian", "=": "native", "|": "no byte order"}[out.dtype.byteorder]
    if out.dtype != want or not out.dtype.isnative or out.shape != (length,):
        shape = "x".join(map(str, out.shape)) or "scalar"
        return f"launch returned {out.dtype.name}[{shape}] ({order}); {says}"
    return None


def compare(spec: coopcheck.KernelSpec, snap: Batch, out: np.ndarray) -> tuple[np.ndarray, np.ndarray,
                                                                            npt.NDArray[np.bool_]]:
    """(output, expected output, wrong) per block and element: one bit-exact comparison."""
    got = out.reshape(snap.n_blocks, -1)
    want = expected(spec, snap, params_of(spec, snap))
    wrong = raw_view(np.ascontiguousarray(got)) != raw_view(np.ascontiguousarray(want))
    return got, want, wrong


def judge(launch: Launch, snap: Batch, out: object) -> list[Verdict]:
    """Every case's verdict (in case order) from the output and what the launch left in its inputs."""
    spec, live, n_cases = launch.spec, launch.batch, len(launch.cases)
    problem = abi_problem(spec, snap, out)
    if problem is not None:
        return [Verdict((CHECK_NAMES[ABI],), (), problem)] * n_cases
    assert isinstance(out, np.ndarray)
    got, want, wrong = compare(spec, snap, out)
    touched = _modified_inputs(spec, snap, live)
    bad_blocks: npt.NDArray[np.bool_] = np.asarray(wrong.any(axis=1) | touched.any(axis=1))
    if not bad_blocks.any():
        return [PASSED] * n_cases
    checks = np.zeros(wrong.shape, dtype=np.int64)
    checks[bad_blocks] = check_ids(spec, snap, np.flatnonzero(bad_blocks))
    diagnoses = diagnose.explain(spec, snap, got, wrong, launch, bad_blocks)
    verdicts = [PASSED] * n_cases
    for case in np.unique(launch.case_of_block[bad_blocks]):
        blocks = np.flatnonzero((launch.case_of_block == case) & bad_blocks)
        verdicts[int(case)] = _verdict(launch, snap, live, got, want, checks, wrong, touched, blocks, diagnoses)
    return verdicts


def _modified_inputs(spec: coopcheck.KernelSpec, snap: Batch, live: Batch) -> npt.NDArray[np.bool_]:
    """(block, input field) -> whether the launch changed that block's part of the input."""
    fields = INPUT_FIELDS[spec.operation]
    touched = np.zeros((snap.n_blocks, len(fields)), dtype=bool)
    for f, name in enumerate(fields):
        before, after = np.asarray(getattr(snap, name)), getattr(live, name)
        if not isinstance(after, np.ndarray) or after.shape != before.shape or after.dtype != before.dtype:
            touched[:, f] = True
            continue
        diff = raw_view(np.ascontiguousarray(after)) != raw_view(np.ascontiguousarray(before))
        touched[:, f] = diff.reshape(snap.n_blocks, -1).any(axis=1)
    return touched


def _show(value: np.generic, other: np.generic) -> str:
    """A value for a message; floats that print alike show their raw bits too (``nan(0x7fa00001)``)."""
    text = repr(value.item())
    if value.dtype.kind == "f" and text == repr(other.item()):
        bits = value.dtype.itemsize * 2
        text += f"(0x{int(raw_view(np.array([value]))[0]):0{bits}x})"
    return text


def _verdict(launch: Launch, snap: Batch, live: Batch, got: np.ndarray, want: np.ndarray,
             checks: npt.NDArray[np.int64], wrong: npt.NDArray[np.bool_], touched: npt.NDArray[np.bool_],
             blocks: npt.NDArray[np.int64], diagnoses: dict[int, tuple[str, ...]]) -> Verdict:
    """The verdict of one failing case from its failing blocks (one per pattern that caught it)."""
    failed = sorted({CHECK_NAMES[int(c)] for b in blocks for c in np.unique(checks[b][wrong[b]])})
    parts, total = [], int(wrong[blocks].sum())
    first = next((int(b) for b in blocks if wrong[b].any()), None)
    if first is not None:
        name = launch.patterns[int(launch.pattern_of_block[first])]
        for i in np.flatnonzero(wrong[first])[:MAX_DETAIL]:
            g, w = got[first, i], want[first, i]
            parts.append(f"out[{i}]={_show(g, w)}, but should be {_show(w, g)} ({WHY[int(checks[first, i])]})")
        parts[0] = f"pattern {name}, block {first}: " + parts[0]
    fields = INPUT_FIELDS[launch.spec.operation]
    modified = sorted({fields[f] for b in blocks for f in np.flatnonzero(touched[b])})
    if modified:
        failed.append(CHECK_NAMES[INPUTS])
        parts.append(f"the launch modified its input(s) {', '.join(modified)}")
    caught = sorted({launch.patterns[int(launch.pattern_of_block[b])] for b in blocks})
    # A known wrong implementation is deterministic: it explains a case only if it explains every block
    # (pattern) whose output is wrong; a match in one pattern alone is a coincidence of that pattern's data.
    output_blocks = [int(b) for b in blocks if wrong[b].any()]
    explained = tuple(d for d in diagnoses.get(output_blocks[0], ()) if all(d in diagnoses.get(b, ())
                                                                            for b in output_blocks)) \
        if output_blocks else ()
    detail = "; ".join(parts)
    detail += f" ({total} wrong element(s) in {len(caught)} of {len(launch.patterns)} patterns: {', '.join(caught)})"
    if explained:
        detail += " matches: " + ", ".join(diagnose.DIAGNOSES[d] for d in explained)
    return Verdict(tuple(sorted(failed)), explained, detail)


def block_failures(spec: coopcheck.KernelSpec, snap: Batch, out: object, limit: int = MAX_DETAIL) -> list[str]:
    """One line per wrong block of a hand-built launch (the backends' own runtime tests), from the snapshot
    of its inputs taken before the launch; an output off the ABI is one line."""
    problem = abi_problem(spec, snap, out)
    if problem is not None:
        return [problem]
    assert isinstance(out, np.ndarray)
    got, want, wrong = compare(spec, snap, out)
    failing = np.flatnonzero(wrong.any(axis=1))
    checks = np.zeros(wrong.shape, dtype=np.int64)
    checks[failing] = check_ids(spec, snap, failing)
    lines = []
    for b in failing:
        shown = [f"out[{i}]={_show(got[b, i], want[b, i])}, but should be {_show(want[b, i], got[b, i])} "
                 f"({WHY[int(checks[b, i])]})" for i in np.flatnonzero(wrong[b])[:limit]]
        lines.append(f"block {b} (valid {int(np.asarray(snap.valid)[b])}, offset {int(np.asarray(snap.offset)[b])}): "
                     f"{int(wrong[b].sum())} wrong: " + "; ".join(shown))
    return lines
