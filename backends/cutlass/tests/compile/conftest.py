"""Compile tests share one adapter with a fresh disk cache (so the DSL really compiles, once per
kernel key), its inspection reports, and the contracts' resource tables."""

from __future__ import annotations

from functools import cache
from typing import Any

import coopcheck
import pytest
from coopcheck_cutlass.adapter import CutlassAdapter

from harness.inspect import KernelReport, inspect_artifacts

ARCH = "sm_90"


@pytest.fixture(scope="session")
def adapter(tmp_path_factory: pytest.TempPathFactory) -> CutlassAdapter:
    return CutlassAdapter(disk_cache=tmp_path_factory.mktemp("artifact-cache"))


@pytest.fixture(scope="session")
def inspect(adapter: CutlassAdapter) -> Any:
    """spec -> the inspection report of its compiled kernel (each inspected once)."""

    @cache
    def report(spec: coopcheck.KernelSpec) -> KernelReport:
        return inspect_artifacts(adapter.artifacts(adapter.compile(spec, arch=ARCH)))

    return report
