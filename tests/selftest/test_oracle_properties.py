"""Properties of the oracle over launches hypothesis draws: small specs of any shape and algorithm, and any
valid_items, offset and oob choice per block (not only the profile's classes).

The reference model passes every such launch; and for any output, the oracle's wrong elements and the
checks that own them equal a brute-force element-by-element comparison against the model's output,
whether the output was corrupted bit by bit or produced by a mutant.
"""

from __future__ import annotations

import coopcheck
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.oracles.block_load_store import CHECK_NAMES, REGION_SLACK, check_ids, compare, region
from harness.oracles.values import pattern

from .model import Array, ReferenceModel
from .mutants import BOTH, MUTANTS, Mutant

#: Mutants that only change output elements (the others break the ABI or the inputs before any compare).
OUTPUT_ONLY = [m for m in MUTANTS if not {"output-abi", "inputs-unmodified"} & set(m.rules)]
PROPERTY = settings(max_examples=60, deadline=None, derandomize=True, database=None)
Batch = coopcheck.LoadBatch | coopcheck.StoreBatch


def _shapes(warp_multiple: bool) -> st.SearchStrategy[tuple[int, ...]]:
    """Block shapes of 1 to 3 dimensions; with ``warp_multiple``, only whole warps."""
    if warp_multiple:
        return st.one_of(
            st.integers(1, 3).map(lambda k: (32 * k,)),
            st.builds(lambda x, k: (x, 32 // x * k), st.sampled_from([1, 2, 4, 8, 16]), st.integers(1, 2)),
            st.builds(lambda x, k: (x, 32 // x, k), st.sampled_from([2, 4, 8]), st.integers(1, 2)),
        )
    return st.one_of(
        st.tuples(st.integers(1, 70)),
        st.tuples(st.integers(1, 9), st.integers(1, 9)),
        st.tuples(st.integers(1, 5), st.integers(1, 5), st.integers(1, 4)),
    )


@st.composite
def launches(draw: st.DrawFn, operation: str) -> tuple[coopcheck.KernelSpec, Batch]:
    """One batched launch of 1 to 3 blocks, each with its own valid_items, offset and oob choice."""
    alg, dtype = draw(st.sampled_from(coopcheck.ALGORITHMS)), draw(st.sampled_from(coopcheck.DTYPES))
    block, ipt = draw(_shapes(alg == "warp_transpose")), draw(st.sampled_from([1, 2, 3, 4, 5, 8, 16]))
    spec = coopcheck.KernelSpec(operation, dtype, block, ipt, alg)
    n, seed = draw(st.integers(1, 3)), draw(st.integers(0, 2**32 - 1))
    valid = np.array(draw(st.lists(st.integers(0, spec.tile), min_size=n, max_size=n)), dtype=np.int32)
    offset = np.array(draw(st.lists(st.integers(0, REGION_SLACK), min_size=n, max_size=n)), dtype=np.int64)
    reg, tile = region(spec), spec.tile
    if operation == "block.store":
        return spec, coopcheck.StoreBatch(items=pattern(spec.dtype, n * tile, "src", seed),
                                     dst=pattern(spec.dtype, n * reg, "sentinel", seed),
                                     valid=valid, offset=offset, region=reg)
    has_oob = np.array(draw(st.lists(st.booleans(), min_size=n, max_size=n)), dtype=np.int32)
    return spec, coopcheck.LoadBatch(src=pattern(spec.dtype, n * reg, "src", seed),
                                init=pattern(spec.dtype, n * tile, "sentinel", seed),
                                valid=valid, offset=offset, has_oob=has_oob,
                                oob=pattern(spec.dtype, n, "oob", seed), region=reg)


def _wrong(spec: coopcheck.KernelSpec, batch: Batch, out: Array) -> tuple[np.ndarray, np.ndarray]:
    """(wrong, check id) per block and element, as the oracle sees them."""
    _, _, wrong = compare(spec, batch, out)
    return wrong, check_ids(spec, batch, np.arange(batch.n_blocks))


def _check_of(spec: coopcheck.KernelSpec, batch: Batch, block: int, k: int) -> str:
    """The oracle check that owns element ``k`` of ``block``'s output, from the contract text alone."""
    valid = int(batch.valid[block])
    if isinstance(batch, coopcheck.StoreBatch):
        offset = int(batch.offset[block])
        return "valid-prefix-written" if offset <= k < offset + valid else "nothing-else-written"
    rank, item = divmod(k, spec.items_per_thread)
    index = rank + item * spec.threads if spec.algorithm == "striped" else k
    if index < valid:
        return "valid-items-placed"
    return "oob-default-fills" if batch.has_oob[block] else "invalid-slots-untouched"


def _assert_judgements_match_brute_force(spec: coopcheck.KernelSpec, batch: Batch, out: Array,
                                         good: Array) -> None:
    span = spec.tile if isinstance(batch, coopcheck.LoadBatch) else batch.region
    wrong, checks = _wrong(spec, batch, out)
    for block in range(batch.n_blocks):
        got, want = out[block * span:(block + 1) * span], good[block * span:(block + 1) * span]
        brute = [k for k in range(span) if got[k].tobytes() != want[k].tobytes()]
        assert np.flatnonzero(wrong[block]).tolist() == brute, block
        owners = [_check_of(spec, batch, block, k) for k in brute]
        assert [CHECK_NAMES[int(checks[block, k])] for k in brute] == owners


@pytest.mark.parametrize("operation", BOTH)
@PROPERTY
@given(data=st.data())
def test_reference_model_passes_any_launch(operation: str, data: st.DataObject) -> None:
    spec, batch = data.draw(launches(operation))
    wrong, _ = _wrong(spec, batch, ReferenceModel().launch(spec, batch))
    assert not wrong.any(), f"{spec}: blocks {np.flatnonzero(wrong.any(axis=1)).tolist()} wrong"


@pytest.mark.parametrize("operation", BOTH)
@PROPERTY
@given(data=st.data())
def test_judgement_counts_every_corrupted_element(operation: str, data: st.DataObject) -> None:
    """Random bit flips anywhere (NaN, -0.0 and subnormal patterns included): each one is counted once."""
    spec, batch = data.draw(launches(operation))
    good = ReferenceModel().launch(spec, batch)
    bits = good.dtype.itemsize * 8
    where = data.draw(st.lists(st.integers(0, good.size - 1), unique=True, max_size=16))
    masks = data.draw(st.lists(st.integers(1, 2**bits - 1), min_size=len(where), max_size=len(where)))
    out = good.copy()
    out.view(f"uint{bits}")[where] ^= np.array(masks, dtype=f"uint{bits}")
    _assert_judgements_match_brute_force(spec, batch, out, good)


@pytest.mark.parametrize("operation", BOTH)
@PROPERTY
@given(data=st.data())
def test_judgement_fails_exactly_where_a_mutant_differs(operation: str, data: st.DataObject) -> None:
    """A mutant's output is judged wrong in exactly the elements where it differs from the model's."""
    spec, batch = data.draw(launches(operation))
    mutant: type[Mutant] = data.draw(st.sampled_from(OUTPUT_ONLY))
    good = ReferenceModel().launch(spec, batch)
    _assert_judgements_match_brute_force(spec, batch, mutant().launch(spec, batch), good)
