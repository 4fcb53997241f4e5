"""A failing build names the capability and the tool, with the tool's own stderr. The ``built``
fixture gives the checkout's crate with its cache already warm, so only the failing tool runs."""

from __future__ import annotations

import dataclasses
import shutil
from pathlib import Path

import pytest
from coopcheck_rustfatbin.build import Capability, build
from coopcheck_rustfatbin.toolchain import BuildError, Toolchain

pytestmark = pytest.mark.compile


@pytest.fixture(scope="module")
def toolchain() -> Toolchain:
    return Toolchain.discover()


def failing_tool(folder: Path, name: str, message: str, status: int) -> Path:
    tool = folder / name
    tool.write_text(f"#!/bin/sh\necho '{message}' >&2\nexit {status}\n")
    tool.chmod(0o755)
    return tool


def test_a_failing_ptxas_is_named_with_the_capability(tmp_path, toolchain, built):
    ptxas = failing_tool(tmp_path, "ptxas", "ptxas fatal   : Unresolved extern function 'x'", 255)
    with pytest.raises(BuildError, match=r"^sm_80: ptxas exited with 255:\nptxas fatal   : Unresolved extern"):
        build(built.crate, tmp_path / "out", [Capability(80)], toolchain=dataclasses.replace(toolchain, ptxas=ptxas))


def test_a_failing_fatbinary_is_named_with_the_capabilities(tmp_path, toolchain, built):
    fatbinary = failing_tool(tmp_path, "fatbinary", "fatbinary fatal   : Could not open input file", 1)
    with pytest.raises(BuildError, match=r"^sm_80,sm_90: fatbinary exited with 1:\nfatbinary fatal"):
        build(built.crate, tmp_path / "out", [Capability(80), Capability(90)],
              toolchain=dataclasses.replace(toolchain, fatbinary=fatbinary))


def test_a_failing_cargo_is_named_with_the_capability(tmp_path, toolchain, built):
    crate = tmp_path / "kernels"
    shutil.copytree(built.crate, crate, ignore=shutil.ignore_patterns("target"))
    manifest = crate / "Cargo.toml"
    manifest.write_text(manifest.read_text().replace('edition = "2024"', 'edition = "2077"'))
    # cargo stops at the manifest, before compiling anything.
    with pytest.raises(BuildError, match=r"(?s)^sm_80: cargo exited with 101:\n.*failed to parse the `edition` key"):
        build(crate, tmp_path / "out", [Capability(80)], target_root=tmp_path / "target", toolchain=toolchain)
