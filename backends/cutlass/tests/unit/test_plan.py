"""The static plan: the rules a call must pass (each named) and the sizes device code derives."""

from __future__ import annotations

import coopcheck
import pytest
from coopcheck.vocabulary import check_block
from coopcheck_cutlass.plan import check_oob_value, make_plan, spec_plan


def _plan(**overrides: object) -> object:
    params: dict[str, object] = {"dtype": "int32", "block": (128,), "items_per_thread": 4,
                                 "algorithm": "direct"}
    params.update(overrides)
    return make_plan("block.load", **params)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("overrides", "rule"),
    [
        ({"items_per_thread": 0}, "items_per_thread"),
        ({"items_per_thread": True}, "items_per_thread"),
        ({"algorithm": "warp_transpose", "block": (100,)}, "warp_multiple"),
        ({"algorithm": "warp_transpose", "block": (5, 3, 2)}, "warp_multiple"),
        ({"valid_items": -1}, "valid_items_range"),
        ({"valid_items": 513}, "valid_items_range"),
        ({"offset": -1}, "offset_negative"),
        ({"dtype": "bfloat16"}, "dtype"),
        ({"algorithm": "blocked"}, "algorithm"),
        ({"block": ()}, "block"),
        ({"block": (32, 1, 1, 1)}, "block"),
        ({"block": (0,)}, "block"),
        ({"block": [128]}, "block"),
        ({"block": (64, 32)}, "block"),
    ],
    ids=lambda value: str(value) if isinstance(value, str) else None,
)
def test_a_bad_static_is_refused_naming_its_rule(overrides: dict[str, object], rule: str) -> None:
    with pytest.raises(coopcheck.InvalidParameter) as raised:
        _plan(**overrides)
    assert raised.value.rule == rule


def test_oob_default_on_store_is_refused() -> None:
    spec = coopcheck.KernelSpec("block.store", "int32", (128,), 4, "direct", statics=(("store_oob_default", True),))
    with pytest.raises(coopcheck.InvalidParameter) as raised:
        spec_plan(spec)
    assert raised.value.rule == "store_oob_default"


def test_statics_at_the_edges_of_their_range_are_accepted() -> None:
    assert _plan(valid_items=0, offset=0).tile == 512
    assert _plan(valid_items=512).tile == 512
    check_block((1024,))
    check_block((8, 4, 32))


@pytest.mark.parametrize(
    ("dtype", "ipt", "vector"),
    [("uint8", 16, 16), ("uint8", 8, 8), ("uint8", 7, 1), ("int16", 16, 8), ("int32", 4, 4),
     ("int32", 3, 1), ("int32", 2, 2), ("float64", 16, 2), ("float64", 1, 1), ("float16", 4, 4)],
)
def test_vectorize_uses_the_widest_access_that_divides_the_chunk(dtype: str, ipt: int, vector: int) -> None:
    assert _plan(dtype=dtype, items_per_thread=ipt, algorithm="vectorize").vector_items == vector


@pytest.mark.parametrize(
    ("algorithm", "block", "scratch_bytes"),
    [("direct", (128,), 0), ("striped", (16, 8), 0), ("vectorize", (128,), 0),
     ("transpose", (5, 3, 2), 30 * 3 * 8), ("warp_transpose", (8, 4, 2), 64 * 3 * 8)],
)
def test_only_the_transpose_family_needs_scratch(algorithm: str, block: tuple[int, ...],
                                                 scratch_bytes: int) -> None:
    plan = make_plan("block.store", dtype="float64", block=block, items_per_thread=3, algorithm=algorithm)
    assert plan.scratch_bytes == scratch_bytes


@pytest.mark.parametrize(
    ("dtype", "value"),
    [("uint8", 256), ("uint8", -1), ("int8", 128), ("int64", 2**63), ("uint64", 2**64), ("int32", 1.5),
     ("float32", True), ("int32", "7"), ("int32", None)],
)
def test_a_static_oob_default_must_fit_the_dtype(dtype: str, value: object) -> None:
    with pytest.raises(coopcheck.InvalidParameter) as raised:
        check_oob_value(dtype, value)
    assert raised.value.rule == "oob_default_value"


@pytest.mark.parametrize(("dtype", "value"), [("uint8", 255), ("int8", -128), ("uint64", 2**64 - 1),
                                              ("float16", 1.5), ("float64", 3)])
def test_a_static_oob_default_that_fits_is_accepted(dtype: str, value: object) -> None:
    check_oob_value(dtype, value)
