"""The built fatbin: the archs asked for, PTX only where asked, the listing cuobjdump gives, and a
manifest that names every kernel and the tools."""

from __future__ import annotations

import re
import subprocess

import pytest
from coopcheck import fatbin
from coopcheck_rustfatbin import abi

from harness.inspect.tools import locate_tool

pytestmark = pytest.mark.compile


def test_the_elf_archs_are_the_archs_asked_for(built):
    elves = [e.sm for e in fatbin.entries(built.data) if e.kind == fatbin.KIND_ELF]
    assert elves == ["sm_80", "sm_90"]


def test_ptx_is_present_exactly_for_the_capability_marked_ptx_and_plain(built):
    ptx = [e for e in fatbin.entries(built.data) if e.kind == fatbin.KIND_PTX]
    assert [(e.sm, e.compressed) for e in ptx] == [("sm_90", False)]
    text = fatbin.extract(built.data, ptx[0]).decode()
    assert re.search(r"^\.target sm_90$", text, re.MULTILINE)
    assert ".entry coop_block_load__int32__ipt4__striped(" in text


def test_the_listing_matches_cuobjdump(built):
    cuobjdump = locate_tool("cuobjdump", "nvidia-cuda-cuobjdump")
    listed = subprocess.run([str(cuobjdump), "-lelf", "-lptx", str(built.fatbin)],
                            capture_output=True, text=True, check=True).stdout
    # "ELF file    1: coop_kernels.1.sm_80.cubin" / "PTX file    1: coop_kernels.1.sm_90.ptx"
    theirs = sorted(re.findall(r"^(ELF|PTX) file\s+\d+: \S+\.(sm_\d+)\.(?:cubin|ptx)$", listed, re.MULTILINE))
    ours = sorted((e.kind_name, e.sm) for e in fatbin.entries(built.data))
    assert theirs == ours and len(ours) == 3


def test_every_pass_exports_every_contract_kernel_and_the_arch_probe(built):
    for capability in built.manifest["capabilities"]:
        extra = set(capability["symbols"]) - abi.exported_symbols()
        assert abi.exported_symbols() <= set(capability["symbols"]), capability["arch"]
        probes = {abi.PROBE_CUDA_ARCH} | ({abi.PROBE_SM90} if capability["arch"] == "sm_90" else set())
        assert extra == probes, capability["arch"]


def test_the_manifest_names_the_tools_and_times_each_pass(built):
    tools = built.manifest["tools"]
    assert set(tools) == {"rustc", "llvm", "cargo", "ptxas", "fatbinary"}
    assert tools["rustc"].startswith("rustc ") and "release" in tools["ptxas"]
    assert [(c["arch"], c["ptx"]) for c in built.manifest["capabilities"]] == [("sm_80", False), ("sm_90", True)]
    for capability in built.manifest["capabilities"]:
        assert capability["cargo_seconds"] >= 0 and capability["ptxas_seconds"] >= 0
        assert capability["ptx_isa"] in {"7.0", "7.8"}
