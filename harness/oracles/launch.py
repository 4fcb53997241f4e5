"""What every family's oracle hands the engine: one batched launch, and one verdict per case.

Family-neutral on purpose: the engine reads these and nothing else of an oracle's data.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import coopcheck
import numpy as np
import numpy.typing as npt

from harness.cases import Case


@dataclass(frozen=True)
class Launch:
    """One batched launch: block b runs case ``cases[case_of_block[b]]`` in pattern ``pattern_of_block[b]``;
    ``batch`` is the family's kernel arguments (its ABI)."""

    spec: coopcheck.KernelSpec
    cases: tuple[Case, ...]
    batch: Any
    case_of_block: npt.NDArray[np.int64]
    pattern_of_block: npt.NDArray[np.int64]
    patterns: tuple[str, ...]
    seed: int  # the block-order seed


@dataclass(frozen=True)
class Verdict:
    """One case's judgement: the checks it failed (none: a pass), the diagnoses that explain it, why."""

    checks: tuple[str, ...]
    diagnoses: tuple[str, ...]
    detail: str

    @property
    def passed(self) -> bool:
        return not self.checks


PASSED = Verdict((), (), "")


def block_order(global_seed: int, cases: Sequence[Case], n_patterns: int) -> tuple[int, npt.NDArray[np.int64]]:
    """(seed, permutation of the launch's blocks): a function of the seed and the launch's cases only, so an
    identical re-run repeats it, and a position-dependent bug is not always charged to the same case."""
    digest = hashlib.sha256(f"{global_seed}:".encode() + "\n".join(c.id for c in cases).encode()).digest()
    seed = int.from_bytes(digest[:8], "little")
    return seed, np.random.default_rng(seed).permutation(len(cases) * n_patterns).astype(np.int64)
