"""The host toolchain's parsing and version gate, and the on-disk artifact cache."""

from __future__ import annotations

from pathlib import Path

import coopcheck
import pytest
from coopcheck_numba import toolchain
from coopcheck_numba.cache import ENV, ArtifactCache

PTX = """//
// Cuda compilation tools, release 13.0, V13.0.88
//
.version {version}
.target sm_90
.address_size 64

.visible .entry _ZN10coop_numba7kernels37coop_block_load__int32__ipt4__stripedB2v1E(
\t.param .u64 p0
)
{{
\tret;
}}
"""


@pytest.mark.parametrize(("arch", "cc"), [("sm_90", (9, 0)), ("sm_90a", (9, 0)), ("sm_100", (10, 0)),
                                          ("sm_89", (8, 9)), ("sm_120f", (12, 0))])
def test_compute_capability(arch: str, cc: tuple[int, int]) -> None:
    assert toolchain.compute_capability(arch) == cc


@pytest.mark.parametrize("arch", ["compute_90", "sm90", "sm_9", "90"])
def test_compute_capability_refuses_other_spellings(arch: str) -> None:
    with pytest.raises(toolchain.ToolchainError, match="sm_XY"):
        toolchain.compute_capability(arch)


def test_ptx_version() -> None:
    assert toolchain.ptx_version(PTX.format(version="9.0")) == (9, 0)


@pytest.mark.parametrize("version", ["8.8", "9.0"])
def test_ptx_up_to_the_cuda_13_0_limit_passes(version: str) -> None:
    toolchain.check_ptx_version(PTX.format(version=version), "kernel")


@pytest.mark.parametrize("version", ["9.1", "9.5", "10.0"])
def test_newer_ptx_is_refused_with_the_pins_to_install(version: str) -> None:
    with pytest.raises(toolchain.ToolchainError, match=rf"k: NVVM emitted PTX {version}.*nvidia-nvvm==13\.0\.88"):
        toolchain.check_ptx_version(PTX.format(version=version), "k")


def test_cache_round_trip(tmp_path: Path) -> None:
    cache = ArtifactCache(tmp_path / "cache")
    key = ArtifactCache.key("fingerprint", "sm_90", "coop_block_load__int32__ipt4__direct")
    assert cache.get(key) is None
    cache.put(key, "ptx text", b"\x7fELF cubin")
    assert cache.get(key) == ("ptx text", b"\x7fELF cubin")
    assert sorted(p.name for p in (tmp_path / "cache").iterdir()) == [f"{key}.cubin", f"{key}.ptx"]


def test_cache_entry_without_its_cubin_is_a_miss(tmp_path: Path) -> None:
    cache = ArtifactCache(tmp_path)
    (tmp_path / "k.ptx").write_text("ptx")
    assert cache.get("k") is None


def test_cache_key_separates_toolchain_arch_and_kernel() -> None:
    base = ("fp", "sm_90", "coop_block_store__uint8__ipt16__vectorize")
    keys = {ArtifactCache.key(*base), ArtifactCache.key("fp2", *base[1:]),
            ArtifactCache.key(base[0], "sm_100", base[2]), ArtifactCache.key(*base[:2], base[2] + "x")}
    assert len(keys) == 4


def test_cache_is_opt_in(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv(ENV, raising=False)
    assert ArtifactCache.from_environment() is None
    monkeypatch.setenv(ENV, "")
    assert ArtifactCache.from_environment() is None
    monkeypatch.setenv(ENV, str(tmp_path))
    cache = ArtifactCache.from_environment()
    assert cache is not None and cache.root == tmp_path


@pytest.mark.parametrize("edited", [Path(toolchain.__file__).with_name("kernels.py"),
                                    Path(coopcheck.__file__).with_name("exchange.py")], ids=["own", "shared-abi"])
def test_the_fingerprint_covers_every_source_a_kernel_is_built_from(edited: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """The kernels are built from this package and from the shared ABI package (tile lengths, warp lanes, rules):
    a change to either must not reuse a cached cubin."""
    before = toolchain.fingerprint()
    toolchain.fingerprint.cache_clear()
    read = Path.read_bytes
    monkeypatch.setattr(Path, "read_bytes", lambda path: read(path) + (b"# edited\n" if path == edited else b""))
    try:
        assert toolchain.fingerprint() != before
    finally:
        toolchain.fingerprint.cache_clear()
