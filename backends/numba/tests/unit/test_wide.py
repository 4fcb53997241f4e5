"""Which wide access ``vectorize`` makes for each dtype and items_per_thread."""

from __future__ import annotations

import pytest
from coopcheck_numba.wide import MAX_VECTOR_BYTES, vector_width


@pytest.mark.parametrize(
    ("itemsize", "ipt", "width"),
    [
        (1, 16, 16), (1, 8, 8), (1, 7, 1), (1, 2, 2),
        (2, 16, 8), (2, 4, 4), (2, 3, 1),
        (4, 16, 4), (4, 8, 4), (4, 4, 4), (4, 2, 2), (4, 1, 1),
        (8, 16, 2), (8, 4, 2), (8, 2, 2), (8, 3, 1), (8, 1, 1),
    ],
)
def test_vector_width(itemsize: int, ipt: int, width: int) -> None:
    assert vector_width(itemsize, ipt) == width


@pytest.mark.parametrize("itemsize", [1, 2, 4, 8])
@pytest.mark.parametrize("ipt", [1, 2, 3, 4, 7, 8, 16])
def test_wide_access_divides_the_thread_items_and_fits_128_bits(itemsize: int, ipt: int) -> None:
    width = vector_width(itemsize, ipt)
    assert ipt % width == 0
    assert width * itemsize <= MAX_VECTOR_BYTES
