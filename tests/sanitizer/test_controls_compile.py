"""Every positive-control kernel compiles for sm_90 on the host: a control that cannot compile
would fail its lane only on the GPU machine (as a numba typing error once did)."""

from __future__ import annotations

import inspect

import numpy as np
import pytest

from harness.sanitizer import controls
from harness.sanitizer.tools import CONTROLS, Control


@pytest.mark.parametrize("control", CONTROLS.values(), ids=lambda c: c.id)
def test_control_kernel_compiles_for_sm90(control: Control) -> None:
    from numba import cuda
    from numba.cuda.np import numpy_support

    kernel = getattr(controls, control.symbol)
    array = numpy_support.from_dtype(np.dtype(np.int32))[:]
    arity = len(inspect.signature(kernel.py_func).parameters)
    ptx, _ = cuda.compile_ptx(kernel.py_func, (array,) * arity, cc=(9, 0))
    assert control.symbol in ptx
