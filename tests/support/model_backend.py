"""A test backend: the self-test's per-thread reference model behind the coop adapter protocol.

It lets the engine, the supervisor and the pytest plugin run end to end on a machine without a GPU.
``COOP_MODEL_FAULT=<kind>:<text>`` plants a fault in every launch whose kernel symbol contains <text>
(several, comma-separated: the first that matches a launch applies), ``COOP_MODEL_UNSUPPORTED=<algorithm>``
declares one algorithm unsupported and ``COOP_MODEL_UNSUPPORTED_CASE=<axis>=<value>`` every case whose
resolved case value is that (``offset=1``: the misaligned offset class), so crash isolation, timeouts and
verdict handling can be shown to work. ``COOP_MODEL_LEAVE_OUT=<operation>,...`` leaves operations out of the
backend's declaration. One kernel builder per family: the self-test's reference model (Load/Store) and
:class:`tests.support.block_copy.CopyModel` (the test-only Copy family). Fault kinds: ``crash``, ``hang``,
``raise``; ``corrupt`` flips one bit of block 0, ``corrupt-second`` one bit of block 1 (a bug that depends
on a block's position in the launch), ``flip`` one random bit of a random block, drawn afresh in every
launch (unseeded: a flaky device that corrupts data). ``COOP_MODEL_LOST=<file>`` kills the process that
activates the backend unless <file> exists, creating it: a worker lost once between groups;
``COOP_MODEL_LOST=always`` kills every such process. ``COOP_MODEL_START_SECONDS=<s>`` makes activating the
backend take that long (a backend slow to start, as a GPU library can be). ``COOP_MODEL_KEY_LEAVES_OUT=block``
leaves the block shape out of the kernel key, as numba's adapter does (its block is a launch parameter).
"""

from __future__ import annotations

import dataclasses
import os
import random
import signal
import time
from collections.abc import Hashable, Mapping
from pathlib import Path
from typing import Any

import coopcheck
import numpy as np

from tests.selftest.model import ReferenceModel
from tests.support.block_copy import CopyModel

FAULT_ENV = "COOP_MODEL_FAULT"
UNSUPPORTED_ENV = "COOP_MODEL_UNSUPPORTED"
UNSUPPORTED_CASE_ENV = "COOP_MODEL_UNSUPPORTED_CASE"
LOST_ENV = "COOP_MODEL_LOST"
START_ENV = "COOP_MODEL_START_SECONDS"
LEAVE_OUT_ENV = "COOP_MODEL_LEAVE_OUT"
KEY_LEAVES_OUT_ENV = "COOP_MODEL_KEY_LEAVES_OUT"
ENTRY_POINT = "model = tests.support.model_backend:ModelAdapter"


def planted_fault(spec: coopcheck.KernelSpec) -> str:
    """The kind of the first planted fault whose text the kernel symbol of ``spec``, its block shape included,
    contains ('' for none): a symbol without the block plants it in every block shape."""
    symbol = coopcheck.kernel_symbol(spec, include_block=True)
    for entry in os.environ.get(FAULT_ENV, "").split(","):
        kind, _, where = entry.partition(":")
        if where and where in symbol:
            return kind
    return ""


class ModelAdapter:
    name = "model"

    def __init__(self) -> None:
        load_store = ReferenceModel()
        builders = {"block.load": load_store, "block.store": load_store, "block.copy": CopyModel()}
        left_out = set(os.environ.get(LEAVE_OUT_ENV, "").split(","))
        self.builders = {op: builder for op, builder in builders.items() if op not in left_out}
        self.operations = frozenset(self.builders)
        time.sleep(float(os.environ.get(START_ENV, "0")))
        lost = os.environ.get(LOST_ENV, "")
        once = lost not in ("", "always") and not Path(lost).exists()
        if once:
            Path(lost).touch()
        if once or lost == "always":
            os.kill(os.getpid(), signal.SIGKILL)

    def unsupported_reason(self, spec: coopcheck.KernelSpec) -> str | None:
        if spec.algorithm == os.environ.get(UNSUPPORTED_ENV):
            return f"the model does not implement {spec.algorithm}"
        return None

    def unsupported_case(self, spec: coopcheck.KernelSpec, values: Mapping[str, Any]) -> str | None:
        axis, _, value = os.environ.get(UNSUPPORTED_CASE_ENV, "").partition("=")
        if axis in values and str(values[axis]) == value:
            return f"the model does not take {axis}={value}"
        return None

    def kernel_key(self, spec: coopcheck.KernelSpec) -> Hashable:
        return dataclasses.replace(spec, block=()) if os.environ.get(KEY_LEAVES_OUT_ENV) == "block" else spec

    def compile(self, spec: coopcheck.KernelSpec, *, arch: str) -> coopcheck.KernelSpec:
        return self.builders[spec.operation].compile(spec)

    def artifacts(self, compiled: coopcheck.KernelSpec) -> coopcheck.Artifacts:
        return coopcheck.Artifacts(kernel_name=coopcheck.kernel_symbol(compiled))

    def can_launch(self) -> bool:
        return True

    def launch(self, compiled: coopcheck.KernelSpec, spec: coopcheck.KernelSpec, batch: Any) -> np.ndarray:
        kind = planted_fault(spec)
        if kind == "crash":
            os.kill(os.getpid(), signal.SIGSEGV)
        if kind == "hang":
            time.sleep(3600)
        if kind == "raise":
            raise RuntimeError(f"planted launch failure in {coopcheck.kernel_symbol(spec)}")
        out = self.builders[spec.operation].launch(spec, batch)
        blocks = out.view(np.uint8).reshape(batch.n_blocks, -1)  # each block's bytes, in launch order
        if kind == "corrupt":
            blocks[0, 0] ^= 1
        if kind == "corrupt-second" and batch.n_blocks > 1:
            blocks[1, 0] ^= 1
        if kind == "flip":
            draw = random.SystemRandom()
            blocks[draw.randrange(batch.n_blocks), draw.randrange(blocks.shape[1])] ^= 1 << draw.randrange(8)
        return out
