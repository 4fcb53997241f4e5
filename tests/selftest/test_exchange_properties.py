"""Properties of the Exchange oracle over launches hypothesis draws: any method, block shape (the warp methods'
whole warps or one partial one), items_per_thread, slicing and output, and any rank pattern per block.

The exchange model passes every such launch; and one flipped bit anywhere in what the contract specifies is
that element wrong and no other, charged to the check that owns it.
"""

from __future__ import annotations

import coopcheck
import numpy as np
from coopcheck.exchange import METHODS, PARTIAL, WARP_METHODS
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.oracles import block_exchange as oracle
from harness.oracles.values import pattern

from .exchange_model import ExchangeModel

PROPERTY = settings(max_examples=60, deadline=None, derandomize=True, database=None)


@st.composite
def launches(draw: st.DrawFn) -> tuple[coopcheck.KernelSpec, coopcheck.ExchangeBatch]:
    """One batched launch of 1 to 3 blocks, each with its own rank pattern."""
    method = draw(st.sampled_from(METHODS))
    if method in WARP_METHODS:
        block = draw(st.one_of(st.tuples(st.integers(1, 31)), st.integers(1, 3).map(lambda k: (32 * k,)),
                               st.tuples(st.sampled_from([2, 4, 8]), st.sampled_from([4, 8, 16]))))
    else:
        block = draw(st.one_of(st.tuples(st.integers(1, 70)), st.tuples(st.integers(1, 9), st.integers(1, 9)),
                               st.tuples(st.integers(1, 5), st.integers(1, 5), st.integers(1, 4))))
    spec = coopcheck.KernelSpec("block.exchange", draw(st.sampled_from(coopcheck.DTYPES)), block,
                                draw(st.sampled_from([1, 2, 3, 4, 5, 8])), method,
                                variant=(("slicing", draw(st.sampled_from(["off", "on"]))),
                                         ("output", draw(st.sampled_from(["inplace", "separate"])))))
    kinds = (["identity", "reverse", "random"] + (["partial", "sparse"] if method in PARTIAL else [])
             if method.startswith("scatter") else ["none"])
    n, seed = draw(st.integers(1, 3)), draw(st.integers(0, 2**32 - 1))
    chosen = draw(st.lists(st.sampled_from(kinds), min_size=n, max_size=n))
    ranks, flags = oracle.rank_inputs(spec, chosen, np.full(n, seed, np.uint64), np.arange(n, dtype=np.int64))
    items = pattern(spec.dtype, n * spec.tile, "src", seed)
    return spec, coopcheck.ExchangeBatch(items, ranks.reshape(-1), flags.reshape(-1), spec.tile)


@PROPERTY
@given(launches())
def test_the_model_passes_and_one_flipped_bit_is_that_element_wrong(drawn: tuple[coopcheck.KernelSpec,
                                                                                  coopcheck.ExchangeBatch]) -> None:
    spec, batch = drawn
    out = ExchangeModel().launch(spec, oracle.snapshot(batch))
    *_, wrong = oracle.compare(spec, batch, out)
    assert not wrong.any()
    _, defined = oracle.expected(spec, batch, oracle.params_of(spec))
    block, index = (int(i[len(i) // 2]) for i in np.nonzero(defined))
    bad = out.copy()
    bad.view(np.uint8).reshape(batch.n_blocks, -1)[block, index * bad.itemsize] ^= 0x10
    _, _, wrong = oracle.compare(spec, batch, bad)
    assert list(zip(*np.nonzero(wrong), strict=True)) == [(block, index)]
    check = oracle.check_ids(spec, batch, np.array([block]))[0, index]
    assert oracle.CHECK_NAMES[int(check)] == ("input-kept" if index >= spec.tile else "items-exchanged")
