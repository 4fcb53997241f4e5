"""A test backend: the self-test's per-thread reference model behind the coop adapter protocol.

It lets the engine, the supervisor and the pytest plugin run end to end on a machine without a
GPU. ``COOP_MODEL_FAULT=crash:<text>|hang:<text>|raise:<text>|corrupt:<text>`` plants a fault in every
launch whose kernel symbol contains <text>, and ``COOP_MODEL_UNSUPPORTED=<algorithm>`` declares one
algorithm unsupported, so crash isolation, timeouts and verdict handling can be shown to work.
"""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Hashable

import coop
import numpy as np

from tests.selftest.model import ReferenceModel

FAULT_ENV = "COOP_MODEL_FAULT"
UNSUPPORTED_ENV = "COOP_MODEL_UNSUPPORTED"
ENTRY_POINT = "model = tests.support.model_backend:ModelAdapter"


class ModelAdapter:
    name = "model"

    def __init__(self) -> None:
        self.model = ReferenceModel()

    def unsupported_reason(self, spec: coop.KernelSpec) -> str | None:
        if spec.algorithm == os.environ.get(UNSUPPORTED_ENV):
            return f"the model does not implement {spec.algorithm}"
        return None

    def kernel_key(self, spec: coop.KernelSpec) -> Hashable:
        return spec

    def compile(self, spec: coop.KernelSpec, *, arch: str) -> coop.KernelSpec:
        return self.model.compile(spec)

    def artifacts(self, compiled: coop.KernelSpec) -> coop.Artifacts:
        return coop.Artifacts(kernel_name=coop.kernel_symbol(compiled))

    def can_launch(self) -> bool:
        return True

    def launch(self, compiled: coop.KernelSpec, spec: coop.KernelSpec,
               batch: coop.LoadBatch | coop.StoreBatch) -> np.ndarray:
        kind, _, where = os.environ.get(FAULT_ENV, "").partition(":")
        if where and where in coop.kernel_symbol(spec):
            if kind == "crash":
                os.kill(os.getpid(), signal.SIGSEGV)
            if kind == "hang":
                time.sleep(3600)
            if kind == "raise":
                raise RuntimeError(f"planted launch failure in {coop.kernel_symbol(spec)}")
        out = self.model.launch(spec, batch)
        if where and where in coop.kernel_symbol(spec) and kind == "corrupt":
            out.view(np.uint8)[0] ^= 1  # one flipped bit in block 0's first element
        return out
