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

from harness.cases import Case, point_cases
from harness.contracts import Contract
from harness.families import launched


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


def point_failures(adapter: coopcheck.Adapter, contract: Contract, point: tuple[tuple[str, Any], ...], seed: int,
                   arch: str = "sm_90") -> list[str]:
    """Launch one kernel point as the engine does (every case of the point that the adapter takes, each in every
    data pattern, one block each, its data drawn from ``seed``) through ``adapter`` and judge it by the contract's
    oracle: one line per wrong block (its ``block_failures``, which the backends' runtime tests read and the engine
    does not), then the detail of every failing case; empty when all passed. A point whose every case the adapter
    declines is an error: nothing would be judged."""
    oracle: Any = contract.oracle
    every = point_cases(contract, adapter.name, point)
    cases = launched(adapter, every[0].spec, every)
    if not cases:
        raise ValueError(f"{contract.id}: {adapter.name} declines every case of {dict(point)}: nothing to launch")
    launch = oracle.build(cases[0].spec, cases, seed)
    before = oracle.snapshot(launch.batch)
    got = adapter.launch(adapter.compile(launch.spec, arch=arch), launch.spec, launch.batch)
    failures: list[str] = oracle.block_failures(launch.spec, before, got)
    return failures + [v.detail for v in oracle.judge(launch, before, got) if not v.passed]
