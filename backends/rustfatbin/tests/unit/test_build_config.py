"""The build's configuration: the capability list, the cuda_arch cfgs and rustc flags of a pass,
and how missing tools are reported. No tool runs here."""

from __future__ import annotations

from pathlib import Path

import pytest
from coopcheck_rustfatbin.build import KNOWN_ARCHS, Capability, parse_capabilities, rustflags
from coopcheck_rustfatbin.toolchain import BuildError, Toolchain


def test_capability_list_keeps_order_and_ptx_marks():
    parsed = parse_capabilities("9.0+PTX, 8.0;10.0 12.1")
    assert [(c.sm, c.ptx) for c in parsed] == [("sm_90", True), ("sm_80", False), ("sm_100", False),
                                               ("sm_121", False)]


@pytest.mark.parametrize(("text", "why"), [
    ("sm_90", "is not a capability like 8.0"),
    ("9.0+ptx", "is not a capability like 8.0"),
    ("9.0a", "is not a capability like 8.0"),
    (" ; ", "no capability in"),
    ("8.0;9.0;8.0+PTX", "names a capability twice"),
])
def test_bad_capability_lists_are_refused(text, why):
    with pytest.raises(BuildError, match=f"COOP_CUDA_ARCHS: .*{why}"):
        parse_capabilities(text)


def test_a_pass_sets_every_known_cuda_arch_up_to_its_own():
    assert Capability(90).cuda_arch_cfgs == ("70", "72", "75", "80", "86", "87", "88", "89", "90")
    assert Capability(80).cuda_arch_cfgs == ("70", "72", "75", "80")


def test_an_unknown_capability_still_gets_its_own_cfg():
    assert 95 not in KNOWN_ARCHS
    assert Capability(95).cuda_arch_cfgs[-2:] == ("90", "95")


def test_rustflags_name_the_target_cpu_every_cfg_and_the_known_values():
    flags = rustflags(Capability(90))
    assert flags[0] == "-Ctarget-cpu=sm_90"
    cfgs = [flags[i + 1] for i, flag in enumerate(flags) if flag == "--cfg"]
    assert cfgs == [f'cuda_arch="{a}"' for a in Capability(90).cuda_arch_cfgs]
    check = flags[flags.index("--check-cfg") + 1]
    assert check.startswith("cfg(cuda_arch, values(") and all(f'"{a}"' in check for a in KNOWN_ARCHS)


def test_a_tool_variable_naming_no_executable_is_reported_with_its_name(tmp_path: Path):
    with pytest.raises(BuildError, match=r"RUSTC: .*missing-rustc is not an executable \(set RUSTC"):
        Toolchain.discover({"RUSTC": str(tmp_path / "missing-rustc")})
