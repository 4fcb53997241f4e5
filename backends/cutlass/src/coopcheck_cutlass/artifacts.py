"""What one DSL compile produced, as ``coopcheck.Artifacts``: PTX, cubin, the kernel's entry name and the
dynamic shared memory its launch requests (invisible in the cubin, which declares only an extern
array). Works on the compiled object without importing cutlass.
"""

from __future__ import annotations

import re
from typing import Any

import coopcheck

#: cudaLaunchConfig_t {gridDim, blockDim, dynamicSmemBytes, stream, attrs, numAttrs} as the DSL's
#: lowered host code builds it; field 2 is the dynamic shared memory of the launch.
_CONFIG_TYPE = "!llvm.struct<(array<3 x i32>, array<3 x i32>, i64, ptr, ptr, i32)>"
_SMEM_FIELD = re.compile(r"(%\d+) = llvm\.getelementptr %\d+\[0, 2\] : \(!llvm\.ptr\) -> !llvm\.ptr, "
                         + re.escape(_CONFIG_TYPE))


class ArtifactError(RuntimeError):
    """A compiled function lacks something the harness needs (entry name, PTX, cubin, launch size)."""


def collect(function: Any, arch: str) -> coopcheck.Artifacts:
    """The artifacts of a function compiled with ``--keep-ptx --keep-cubin`` and one kernel launch."""
    entries = list(function.kernel_info)
    if len(entries) != 1:
        raise ArtifactError(f"expected one kernel in the compiled module, found {entries}")
    entry = entries[0]
    ptx, cubin = function.__ptx__, function.__cubin__
    if not isinstance(ptx, str) or not ptx.lstrip().startswith("//") or not isinstance(cubin, bytes):
        raise ArtifactError(f"{entry}: the DSL kept no PTX/cubin (does the dump directory exist?)")
    return coopcheck.Artifacts(
        kernel_name=entry, cubin=cubin, ptx=ptx, arch=arch,
        dynamic_shared_bytes=launch_dynamic_smem(str(function.ir_module), entry),
    )


def launch_dynamic_smem(host_ir: str, entry: str) -> int:
    """The constant the lowered host code stores as the launch's dynamic shared memory.

    The DSL infers it from the kernel's shared allocations; it appears only after lowering, as an
    ``llvm.mlir.constant`` stored into field 2 of the launch configuration.
    """
    fields = _SMEM_FIELD.findall(host_ir)
    if len(fields) != 1:
        raise ArtifactError(f"{entry}: expected one launch configuration in the host code, found {len(fields)}")
    stored = re.findall(rf"llvm\.store (%\d+), {re.escape(fields[0])} : i64", host_ir)
    if len(stored) != 1:
        raise ArtifactError(f"{entry}: the launch's dynamic shared memory is not stored once")
    value = re.search(rf"{re.escape(stored[0])} = llvm\.mlir\.constant\((\d+) : i64\)", host_ir)
    if value is None:
        raise ArtifactError(f"{entry}: the launch's dynamic shared memory is not a compile-time constant")
    return int(value.group(1))
