"""The build says what it starts before it starts it: a cold cargo pass prints nothing for about a minute. Stand-in
tools (shell scripts) play cargo, ptxas and fatbinary, so no toolchain is needed."""

from __future__ import annotations

import json
from pathlib import Path

from coopcheck_rustfatbin.build import Capability, build
from coopcheck_rustfatbin.toolchain import Toolchain


def _tool(folder: Path, name: str, body: str) -> Path:
    tool = folder / name
    tool.write_text(f"#!/bin/sh\n{body}\n")
    tool.chmod(0o755)
    return tool


def _toolchain(folder: Path, ptx: Path) -> Toolchain:
    artifact = json.dumps({"reason": "compiler-artifact", "target": {"name": "coop_kernels"},
                           "filenames": [str(ptx)]})
    cargo = _tool(folder, "cargo", f"echo '{artifact}'")
    # ptxas and fatbinary write the file named after -o / --create=
    ptxas = _tool(folder, "ptxas", 'while [ "$1" != -o ]; do shift; done; echo cubin > "$2"')
    fatbinary = _tool(folder, "fatbinary", 'for a; do case "$a" in --create=*) echo fatbin > "${a#--create=}";; '
                                           'esac; done')
    unused = folder / "unused"
    return Toolchain(rustc=unused, cargo=cargo, llvm_link=unused, llvm_opt=unused, llvm_llc=unused, ptxas=ptxas,
                     fatbinary=fatbinary, vendor=unused, versions={"ptxas": "stand-in"})


def test_each_stage_is_announced_before_it_runs(tmp_path: Path) -> None:
    ptx = tmp_path / "coop_kernels.ptx"
    ptx.write_text(".version 8.7\n.visible .entry coop_k(\n")
    crate = tmp_path / "kernels"
    crate.mkdir()
    lines: list[str] = []
    build(crate, tmp_path / "out", [Capability(80), Capability(90)], target_root=tmp_path / "target",
          toolchain=_toolchain(tmp_path, ptx), log=lines.append)
    stages = [line.removeprefix("coopcheck_rustfatbin.build: ").split(":")[0].split(" (")[0] for line in lines]
    # both passes start before either ends (they run at once), and end in the order asked
    assert stages == ["sm_80", "sm_90", "sm_80", "sm_90", "packing sm_80,sm_90 into coop_kernels.fatbin", "wrote " +
                      str(tmp_path / "out" / "coop_kernels.fatbin")]
    assert lines[0] == ("coopcheck_rustfatbin.build: sm_80: cargo build of core and the kernel crate (a minute or two "
                        "when nothing is cached) ...")
    assert lines[2].startswith("coopcheck_rustfatbin.build: sm_80: 1 kernels, cargo ")
