"""Finding the tools that build the kernel crate into a fatbin, and their versions.

Every tool has an environment variable that names it outright; otherwise: Debian's rustc-web and
cargo-web (``/usr/bin``; rustup's proxies usually come first on PATH and lack the nvptx standard
library source), the LLVM tools of the same major version as rustc's LLVM, and ptxas/fatbinary
from PATH, ``CUDA_HOME/bin`` or the pip ``nvidia-cuda-nvcc`` wheel, in that order. Standard library only:
the wheel build imports this module before any dependency is installed.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

#: env var -> default for the Rust tools.
RUST_DEFAULTS = {"RUSTC": "/usr/bin/rustc", "CARGO": "/usr/bin/cargo"}
#: env var -> LLVM tool; the default is ``<tool>-<rustc's LLVM major>``, then ``<tool>`` itself.
LLVM_TOOLS = {"COOP_LLVM_LINK": "llvm-link", "COOP_LLVM_OPT": "opt", "COOP_LLVM_LLC": "llc"}
#: env var -> CUDA tool.
CUDA_TOOLS = {"PTXAS": "ptxas", "FATBINARY": "fatbinary"}
#: Folder of the crates build-std needs (the standard library's own lock file), below rustc's sysroot.
VENDOR_ENV = "COOP_RUST_VENDOR"
VENDOR_IN_SYSROOT = Path("lib/rustlib/src/rust/library/vendor")
#: pip distributions of the CUDA compiler (CUDA 13, CUDA 12); their file lists locate the tools.
NVCC_DISTRIBUTIONS = ("nvidia-cuda-nvcc", "nvidia-cuda-nvcc-cu12")


class BuildError(RuntimeError):
    """The fatbin cannot be built: a tool is missing or failed; the message names which and why."""


@dataclass(frozen=True)
class Toolchain:
    """Resolved tool paths and the versions the manifest records."""

    rustc: Path
    cargo: Path
    llvm_link: Path
    llvm_opt: Path
    llvm_llc: Path
    ptxas: Path
    fatbinary: Path
    vendor: Path
    versions: dict[str, str]

    @classmethod
    def discover(cls, env: Mapping[str, str] = os.environ) -> Toolchain:
        rustc, cargo = (_given(env, var, default) for var, default in RUST_DEFAULTS.items())
        rustc_info = _output([rustc, "-vV"], "rustc")
        llvm = re.search(r"^LLVM version: (\d+)\S*", rustc_info, re.MULTILINE)
        if llvm is None:
            raise BuildError(f"{rustc} -vV names no LLVM version:\n{rustc_info}")
        major = llvm[1]
        llvm_link, llvm_opt, llvm_llc = (_llvm_tool(env, var, tool, major) for var, tool in LLVM_TOOLS.items())
        ptxas, fatbinary = (_cuda_tool(env, var, tool) for var, tool in CUDA_TOOLS.items())
        sysroot = _output([rustc, "--print", "sysroot"], "rustc").strip()
        vendor = Path(env.get(VENDOR_ENV) or Path(sysroot) / VENDOR_IN_SYSROOT)
        if not any(vendor.glob("*/Cargo.toml")):
            raise BuildError(
                f"{vendor} holds no vendored crates: install rust-web-src (Debian) or set {VENDOR_ENV} "
                "to the library/vendor folder of a rust-src matching rustc"
            )
        versions = {
            "rustc": rustc_info.splitlines()[0],
            "llvm": llvm[0].split(": ")[1],
            "cargo": _output([cargo, "-V"], "cargo").strip(),
            "ptxas": _release(_output([ptxas, "--version"], "ptxas")),
            "fatbinary": _release(_output([fatbinary, "--version"], "fatbinary")),
        }
        return cls(rustc, cargo, llvm_link, llvm_opt, llvm_llc, ptxas, fatbinary, vendor, versions)


def _given(env: Mapping[str, str], var: str, default: str) -> Path:
    path = Path(env.get(var) or default)
    if not os.access(path, os.X_OK):
        raise BuildError(f"{var}: {path} is not an executable (set {var} to the tool's path)")
    return path


def _llvm_tool(env: Mapping[str, str], var: str, tool: str, major: str) -> Path:
    if env.get(var):
        return _given(env, var, "")
    for name in (f"{tool}-{major}", tool):
        found = shutil.which(name)
        if found and f"LLVM version {major}." in _output([Path(found), "--version"], name):
            return Path(found)
    raise BuildError(
        f"no {tool} of LLVM {major} (rustc's LLVM) on PATH as {tool}-{major} or {tool}; "
        f"install llvm-{major} (Debian: rust-web-llvm) or set {var}"
    )


def _cuda_tool(env: Mapping[str, str], var: str, tool: str) -> Path:
    if env.get(var):
        return _given(env, var, "")
    candidates = []
    on_path = shutil.which(tool, path=env.get("PATH"))
    if on_path:
        candidates.append(Path(on_path))
    if env.get("CUDA_HOME"):
        candidates.append(Path(env["CUDA_HOME"]) / "bin" / tool)
    candidates += _wheel_files(tool)
    for candidate in candidates:
        if os.access(candidate, os.X_OK):
            return candidate
    raise BuildError(
        f"{tool} not found on PATH, in CUDA_HOME/bin or in a pip nvidia-cuda-nvcc wheel; "
        f"pip install nvidia-cuda-nvcc, or set {var}"
    )


def _wheel_files(tool: str) -> list[Path]:
    """``bin/<tool>`` of each installed nvcc wheel (its layout differs between CUDA majors)."""
    found = []
    for name in NVCC_DISTRIBUTIONS:
        try:
            files = metadata.distribution(name).files or []
        except metadata.PackageNotFoundError:
            continue
        found += [Path(str(f.locate())) for f in files if f.name == tool and f.parent.name == "bin"]
    return found


def _output(command: list[Path | str], tool: str) -> str:
    try:
        done = subprocess.run([str(c) for c in command], capture_output=True, text=True, check=False)
    except OSError as exc:
        raise BuildError(f"{tool}: cannot run {command[0]}: {exc}") from None
    if done.returncode:
        raise BuildError(f"{tool}: {' '.join(map(str, command))} exited with {done.returncode}: {done.stderr}")
    return done.stdout


def _release(text: str) -> str:
    """``Cuda compilation tools, release 13.0, V13.0.88`` from a CUDA tool's ``--version``."""
    lines = text.strip().splitlines()
    return next((line for line in lines if "release" in line), lines[-1])
