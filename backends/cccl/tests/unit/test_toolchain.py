"""Versions for the journal's fingerprint: the cuda-cccl release and the CCCL headers its wheel bundles."""

from __future__ import annotations

import coopcheck
import pytest
from coopcheck_cccl import toolchain


def test_the_installed_wheel_bundles_cccl_3_5_0() -> None:
    assert toolchain.versions() == {"cuda-cccl": "1.1.1", "cccl": "3.5.0"}


def test_the_registry_reads_the_versions_without_activating_the_backend() -> None:
    assert coopcheck.registry.toolchain("cccl") == toolchain.versions()


@pytest.mark.parametrize(("define", "version"), [("3005000", "3.5.0"), ("3006001", "3.6.1"), ("10000099", "10.0.99")])
def test_cccl_version_reads_the_define(define: str, version: str) -> None:
    header = f"#ifndef X\n#define CCCL_VERSION_X 1\n#define CCCL_VERSION {define}\n#define CCCL_MAJOR_VERSION 3\n"
    assert toolchain.cccl_version(header) == version


def test_a_header_without_the_define_is_named() -> None:
    with pytest.raises(ValueError, match=r"cuda/std/__cccl/version.h: no '#define CCCL_VERSION <number>' line"):
        toolchain.cccl_version("#define CCCL_MAJOR_VERSION 3\n")


def test_another_cuda_cccl_release_is_unavailable_by_name(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(toolchain, "version", lambda name: "1.2.1")
    unavailable = r"backend 'cccl' is unavailable: .*pip install cuda-cccl==1.1.1"
    with pytest.raises(coopcheck.BackendUnavailable, match=unavailable):
        toolchain.require_cuda_cccl()
