"""The Reduce and Scan kernels' arithmetic in the final SASS: float16 adds as IEEE halves (uint16 shares its 16-bit
storage, never its arithmetic), and float min and max compare as floats."""

from __future__ import annotations

import pytest
from coopcheck import KernelSpec
from coopcheck_rustfatbin.adapter import RustFatbinAdapter

from harness.inspect import KernelReport, inspect_artifacts

pytestmark = pytest.mark.compile


@pytest.fixture(scope="module")
def adapter(built) -> RustFatbinAdapter:
    return RustFatbinAdapter(built.fatbin)


def report(adapter: RustFatbinAdapter, dtype: str, op: str, arch: str, operation: str) -> KernelReport:
    variant = (("op", op),) if operation == "block.reduce" else (("op", op), ("mode", "inclusive"), ("seed", "none"))
    spec = KernelSpec(operation, dtype, (64,), 2, "raking", variant=variant)
    return inspect_artifacts(adapter.artifacts(adapter.compile(spec, arch=arch)))


def mnemonics(report: KernelReport) -> set[str]:
    return {opcode.split(".")[0] for opcode in report.opcodes}


FAMILIES = pytest.mark.parametrize("operation", ["block.reduce", "block.scan"])


@FAMILIES
@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
def test_a_float16_sum_adds_halves_and_a_uint16_sum_integers(adapter, arch, operation):
    assert "HADD2" in mnemonics(report(adapter, "float16", "sum", arch, operation))
    assert "HADD2" not in mnemonics(report(adapter, "uint16", "sum", arch, operation))


@FAMILIES
@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
@pytest.mark.parametrize("op", ["min", "max"])
def test_a_float_extreme_compares_floats(adapter, arch, op, operation):
    assert "FSETP" in mnemonics(report(adapter, "float32", op, arch, operation))
    assert "FSETP" not in mnemonics(report(adapter, "int32", op, arch, operation))
