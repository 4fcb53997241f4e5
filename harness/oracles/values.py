"""Data patterns for the inputs of a launch: every bit of every dtype in both states, and every slot
told apart from every other slot in at least one pattern of a case.

A case runs once per pattern, each one more block of the same launch. Every element of a block has a
*code*, unique within the block across roles (source items, per-slot sentinels, the oob default), and
a pattern turns codes into bits:

* ``random``: full-range random bits per element (counter-based, so a case's data depends only on its
  seed, never on the launch it rides in), with specials at a seeded stride: 0, all-ones, the top bit
  alone, the largest positive value, 1 and, for floats, -0.0's neighbours a signalling NaN with a
  payload, the smallest subnormal and +inf (moved through float arithmetic they change);
* ``code<d>``: digit ``d`` (base 2**bits) of the code, XOR a random per-block mask: two elements with
  different codes differ in some digit, so a value moved from another slot shows in some pattern even
  for 8-bit types, where one pattern cannot give every slot its own value;
* ``walk`` / ``walk-inverse``: items hold one bit (all bits but one), sentinels the opposite, the oob
  default 0 (all-ones): each bit alone in both states.
"""

from __future__ import annotations

from typing import Literal

import numpy as np
import numpy.typing as npt

Role = Literal["src", "sentinel", "oob"]
U64 = npt.NDArray[np.uint64]
_ROLE_SALT = {"src": 0x1, "sentinel": 0x2, "oob": 0x3}
#: Every SPECIAL_STRIDE-th element of the random pattern (from a seeded phase) is a special value.
SPECIAL_STRIDE = 5
#: Raw bits of a signalling NaN with a payload, the smallest subnormal and +inf, per float dtype.
_FLOAT_SPECIALS = {
    "float16": (0x7D01, 0x0001, 0x7C00),
    "float32": (0x7FA00001, 0x00000001, 0x7F800000),
    "float64": (0x7FF4000000000001, 0x0000000000000001, 0x7FF0000000000000),
}
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)


def mix(x: U64) -> U64:
    """splitmix64's finalizer: a bijection of uint64 whose outputs look independent for adjacent inputs.

    >>> int(mix(np.array([0], np.uint64))[0]) == int(mix(np.array([1], np.uint64))[0])
    False
    """
    with np.errstate(over="ignore"):
        z = x + _GOLDEN
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return z ^ (z >> np.uint64(31))


def _bits(dtype: str) -> int:
    return np.dtype(dtype).itemsize * 8


def patterns(dtype: str, n_codes: int) -> tuple[str, ...]:
    """The patterns one case of ``dtype`` runs, for blocks of ``n_codes`` distinct elements.

    >>> patterns("uint8", 600)
    ('random', 'code0', 'code1', 'walk', 'walk-inverse')
    >>> patterns("int32", 600)
    ('random', 'code0', 'walk', 'walk-inverse')
    """
    bits = _bits(dtype)
    digits = max(1, -(-max(n_codes - 1, 1).bit_length() // bits))
    return ("random", *(f"code{d}" for d in range(digits)), "walk", "walk-inverse")


def specials(dtype: str) -> npt.NDArray[np.uint64]:
    """Raw bits of the special values the random pattern plants (see the module docstring)."""
    bits = _bits(dtype)
    ones = (1 << bits) - 1
    common = (0, ones, 1 << (bits - 1), (1 << (bits - 1)) - 1, 1)
    return np.array(common + _FLOAT_SPECIALS.get(dtype, ()), dtype=np.uint64)


def fill(dtype: str, pattern: npt.NDArray[np.int64], role: Role, seeds: U64, codes: npt.NDArray[np.int64],
         names: tuple[str, ...]) -> np.ndarray:
    """Values of ``role`` for a launch: one row per block, one column per element of the role.

    ``pattern[b]`` indexes ``names`` (the case's patterns), ``seeds[b]`` is block b's case seed and
    ``codes`` (one per column) the elements' codes within a block.
    """
    bits, n_blocks = _bits(dtype), len(seeds)
    mask_all = np.uint64((1 << bits) - 1)
    code = codes.astype(np.uint64)
    salt = np.uint64(_ROLE_SALT[role])
    keys = mix(seeds * np.uint64(8) + pattern.astype(np.uint64))
    raw = np.empty((n_blocks, len(codes)), dtype=np.dtype(f"uint{bits}"))  # a uint64 stored here keeps its low bits
    for p, name in enumerate(names):
        rows = np.flatnonzero(pattern == p)
        if not rows.size:
            continue
        key = keys[rows]
        if name == "random":
            with np.errstate(over="ignore"):
                values = mix(key[:, None] ^ ((salt << np.uint64(60)) ^ (code * _GOLDEN))[None, :])
            # specials where (code + phase) % STRIDE == 0, phase = key % STRIDE; which one cycles with code // STRIDE
            planted = specials(dtype)
            phase = key % np.uint64(SPECIAL_STRIDE)
            at_row, at_col = np.nonzero((code % np.uint64(SPECIAL_STRIDE))[None, :]
                                        == (np.uint64(SPECIAL_STRIDE) - phase)[:, None] % np.uint64(SPECIAL_STRIDE))
            which = (code[at_col] // np.uint64(SPECIAL_STRIDE) + key[at_row]) % np.uint64(planted.size)
            values[at_row, at_col] = planted[which.astype(np.int64)]
        elif name.startswith("code"):
            digit = int(name[4:])
            values = (code >> np.uint64(digit * bits))[None, :] ^ mix(key)[:, None]
        elif role == "oob":
            values = np.full((rows.size, len(codes)), 0 if name == "walk" else mask_all, np.uint64)
        else:
            one = np.uint64(1) << (code % np.uint64(bits))
            values = np.broadcast_to(one if (role == "src") == (name == "walk") else ~one, (rows.size, len(codes)))
        raw[rows] = values
    return raw.view(np.dtype(dtype))


def pattern(dtype: str, n: int, role: Role, seed: int) -> np.ndarray:
    """``n`` values of ``role`` in the random pattern from ``seed`` (for tests that build one block).

    >>> pattern("uint8", 4, "sentinel", 1).dtype
    dtype('uint8')
    """
    names = ("random",)
    one = np.zeros(1, dtype=np.int64)
    values: np.ndarray = fill(dtype, one, role, np.array([seed % 2**64], np.uint64), np.arange(n, dtype=np.int64),
                              names)[0]
    return values


def raw_view(values: np.ndarray) -> np.ndarray:
    """Bits as unsigned ints, so comparisons are bit-exact (no NaN or -0.0 surprises)."""
    return values.view(np.dtype(f"uint{values.dtype.itemsize * 8}"))
