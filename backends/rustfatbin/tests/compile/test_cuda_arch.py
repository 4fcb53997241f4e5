"""``cfg(cuda_arch = "YY")`` means "sm_YY or newer": each pass's probe adds its own arch, and the
sm_90-only kernel (it reads %cluster_nctarank, which ptxas refuses below sm_90) exists in the
sm_90 pass only."""

from __future__ import annotations

import re

import pytest
from coopcheck import Artifacts
from coopcheck_rustfatbin import abi
from coopcheck_rustfatbin.bundle import Bundle

from harness.inspect import InspectError, inspect_artifacts

pytestmark = pytest.mark.compile


@pytest.mark.parametrize(("arch", "value"), [("sm_80", 80), ("sm_90", 90)])
def test_the_probe_adds_its_pass_arch(built, arch, value):
    report = inspect_artifacts(Artifacts(abi.PROBE_CUDA_ARCH, Bundle(built.fatbin).elf(arch), arch=arch))
    added = {int(n, 16) for i in report.find("IADD3") for n in re.findall(r"\b0x[0-9a-f]+\b", i.assembly)}
    assert added == {value}


# parametrized by the image it lists, so that it joins that arch's xdist group (conftest.py)
@pytest.mark.parametrize("arch", ["sm_90"])
def test_the_sm90_kernel_is_in_the_sm90_pass_only(built, arch):
    bundle = Bundle(built.fatbin)
    report = inspect_artifacts(Artifacts(abi.PROBE_SM90, bundle.elf(arch), arch=arch))
    assert report.find("STG")
    with pytest.raises(InspectError, match="no such function in the cubin"):
        inspect_artifacts(Artifacts(abi.PROBE_SM90, bundle.elf("sm_80"), arch="sm_80"))
