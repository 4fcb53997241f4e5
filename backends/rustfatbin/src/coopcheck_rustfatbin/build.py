"""Building the kernel crate into one fatbin: per compute capability a cargo pass and a ptxas run,
then one fatbinary pack and a JSON manifest beside the fatbin.

The wheel build runs it (``setup.py``); developers run ``python -m coopcheck_rustfatbin.build``.
Standard library only, since the wheel build imports it before any dependency is installed.
"""

from __future__ import annotations

import argparse
import fcntl
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from coopcheck_rustfatbin.toolchain import BuildError, Toolchain

ARCHS_ENV = "COOP_CUDA_ARCHS"
DEFAULT_ARCHS = "8.0;9.0"
#: Root of the per-capability cargo target dirs (the build cache); default ``<crate>/target``.
TARGET_DIR_ENV = "COOP_RUST_TARGET_DIR"
TARGET = "nvptx64-nvidia-cuda"
CRATE_LIB = "coop_kernels"
FATBIN_NAME = f"{CRATE_LIB}.fatbin"
MANIFEST_NAME = f"{CRATE_LIB}.json"
MANIFEST_SCHEMA = 1
#: The capabilities ``cfg(cuda_arch = "..")`` may name (the crate's check-cfg list); a pass for
#: sm_XX gets every one up to XX, so ``cfg(cuda_arch = "90")`` reads "sm_90 or newer".
KNOWN_ARCHS = (70, 72, 75, 80, 86, 87, 88, 89, 90, 100, 101, 103, 110, 120, 121)
PTXAS_FLAGS = ("-O3",)
#: Tail of a failing tool's stderr kept in the error (cargo repeats every warning before it).
STDERR_TAIL = 8000

_CAPABILITY = re.compile(r"(\d+)\.(\d)(\+PTX)?")
_ENTRY = re.compile(r"^\.visible \.entry (\w+)\(", re.MULTILINE)
_PTX_ISA = re.compile(r"^\.version (\S+)", re.MULTILINE)


@dataclass(frozen=True)
class Capability:
    """One entry of the capability list: ``9.0`` ships sm_90 SASS; ``9.0+PTX`` its PTX too."""

    arch: int  # 90
    ptx: bool = False

    @classmethod
    def parse(cls, text: str) -> Capability:
        found = _CAPABILITY.fullmatch(text.strip())
        if found is None:
            raise BuildError(f"{ARCHS_ENV}: {text.strip()!r} is not a capability like 8.0, 9.0 or 9.0+PTX")
        return cls(int(found[1]) * 10 + int(found[2]), bool(found[3]))

    @property
    def sm(self) -> str:
        return f"sm_{self.arch}"

    @property
    def cuda_arch_cfgs(self) -> tuple[str, ...]:
        """The ``cuda_arch`` values this pass sets: every known capability up to its own."""
        return tuple(str(a) for a in sorted({*(a for a in KNOWN_ARCHS if a <= self.arch), self.arch}))


def parse_capabilities(text: str) -> list[Capability]:
    """``"8.0;9.0+PTX"`` (``;``, ``,`` or blanks between entries) in the order given.

    >>> [(c.sm, c.ptx) for c in parse_capabilities("8.0; 9.0+PTX")]
    [('sm_80', False), ('sm_90', True)]
    """
    capabilities = [Capability.parse(item) for item in re.split(r"[;,\s]+", text) if item]
    if not capabilities:
        raise BuildError(f"{ARCHS_ENV}: no capability in {text!r}")
    seen = [c.arch for c in capabilities]
    if len(set(seen)) != len(seen):
        raise BuildError(f"{ARCHS_ENV}: {text!r} names a capability twice")
    return capabilities


def rustflags(capability: Capability) -> list[str]:
    """The rustc flags of one pass: its target CPU, its ``cuda_arch`` cfgs, the known cfg values."""
    known = ", ".join(f'"{a}"' for a in sorted({*map(str, KNOWN_ARCHS), *capability.cuda_arch_cfgs}, key=int))
    flags = [f"-Ctarget-cpu={capability.sm}", "--check-cfg", f"cfg(cuda_arch, values({known}))"]
    for value in capability.cuda_arch_cfgs:
        flags += ["--cfg", f'cuda_arch="{value}"']
    return flags


@dataclass(frozen=True)
class PassResult:
    """What one capability's pass produced."""

    capability: Capability
    ptx: Path
    cubin: Path
    symbols: tuple[str, ...]
    ptx_isa: str
    cargo_seconds: float
    ptxas_seconds: float
    ptxas_cached: bool


def build(
    crate: Path,
    out_dir: Path,
    capabilities: Sequence[Capability],
    *,
    target_root: Path | None = None,
    toolchain: Toolchain | None = None,
    log: Callable[[str], None] = lambda line: print(line, file=sys.stderr),
) -> dict[str, Any]:
    """Build ``crate`` for ``capabilities`` into ``out_dir``/{FATBIN_NAME, MANIFEST_NAME}; return the manifest.

    Each capability keeps its cargo target dir (and ptxas output) under ``target_root`` (default
    ``$COOP_RUST_TARGET_DIR``, else ``crate/target``), so a rebuild recompiles only what changed, wherever
    the crate was unpacked (see :func:`stage_crate`).
    """
    toolchain = toolchain or Toolchain.discover()
    target_root = target_root or Path(os.environ.get(TARGET_DIR_ENV) or crate / "target")
    target_root.mkdir(parents=True, exist_ok=True)
    with (target_root / "build.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # one build at a time per cache: the staged crate is shared
        passes = _passes(stage_crate(crate, target_root), target_root, capabilities, toolchain, log)
    out_dir.mkdir(parents=True, exist_ok=True)
    fatbin = out_dir / FATBIN_NAME
    built = ",".join(p.capability.sm for p in passes)
    log(f"coopcheck_rustfatbin.build: packing {built} into {FATBIN_NAME} (fatbinary)")
    _pack(passes, fatbin, toolchain)
    manifest = {
        "schema": MANIFEST_SCHEMA,
        "fatbin": FATBIN_NAME,
        "sha256": hashlib.sha256(fatbin.read_bytes()).hexdigest(),
        "tools": toolchain.versions,
        "capabilities": [
            {
                "arch": p.capability.sm,
                "ptx": p.capability.ptx,
                "ptx_isa": p.ptx_isa,
                "cuda_arch_cfgs": list(p.capability.cuda_arch_cfgs),
                "cargo_seconds": round(p.cargo_seconds, 2),
                "ptxas_seconds": round(p.ptxas_seconds, 2),
                "ptxas_cached": p.ptxas_cached,
                "symbols": list(p.symbols),
            }
            for p in passes
        ],
    }
    (out_dir / MANIFEST_NAME).write_text(json.dumps(manifest, indent=1) + "\n")
    log(f"coopcheck_rustfatbin.build: wrote {fatbin} ({fatbin.stat().st_size} bytes) and {MANIFEST_NAME}")
    return manifest


def _passes(crate: Path, target_root: Path, capabilities: Sequence[Capability], toolchain: Toolchain,
            log: Callable[[str], None]) -> list[PassResult]:
    """Every capability's pass at once (each is mostly one single-threaded rustc, then ptxas), in the order given."""
    for capability in capabilities:
        # the first pass per capability builds core from source, silently: say so before it starts
        log(f"coopcheck_rustfatbin.build: {capability.sm}: cargo build of core and the kernel crate (a minute or "
            "two when nothing is cached) ...")
    with ThreadPoolExecutor(max_workers=max(1, min(len(capabilities), os.cpu_count() or 1))) as pool:
        futures = [pool.submit(_pass, crate, target_root / c.sm, c, toolchain) for c in capabilities]
        passes = [future.result() for future in futures]
    for result in passes:
        cached = " (ptxas cached)" if result.ptxas_cached else ""
        log(
            f"coopcheck_rustfatbin.build: {result.capability.sm}: {len(result.symbols)} kernels, cargo "
            f"{result.cargo_seconds:.1f} s, ptxas {result.ptxas_seconds:.1f} s{cached}"
        )
    return passes


def stage_crate(crate: Path, target_root: Path) -> Path:
    """The crate's files under ``target_root``/crate, written only where they differ.

    cargo keys its cache by the crate's path, and each isolated wheel build unpacks the sources somewhere
    new: built in place, every wheel build recompiled core (about a minute per capability). Unchanged files
    keep their modification times, so cargo sees nothing new; a changed one is written with the time of staging,
    since cargo rebuilds only sources newer than its last build (a source's own time may be older: edited on
    another branch, or in another checkout sharing the cache). The crate's own ``target`` is not copied.
    """
    staged = target_root / "crate"
    wanted = {path.relative_to(crate) for path in crate.rglob("*")
              if path.is_file() and path.relative_to(crate).parts[0] != "target"}
    for rel in sorted(wanted):
        source, copy = crate / rel, staged / rel
        if not copy.is_file() or copy.read_bytes() != source.read_bytes():
            copy.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, copy)  # written now: newer than any build cargo recorded
            shutil.copymode(source, copy)
    for path in sorted(staged.rglob("*"), reverse=True):
        if path.is_file() and path.relative_to(staged) not in wanted:
            path.unlink()
    return staged


def _pass(crate: Path, target_dir: Path, capability: Capability, toolchain: Toolchain) -> PassResult:
    env = {
        **os.environ,
        "RUSTC": str(toolchain.rustc),
        # build-std and the nvptx ABI are unstable features of a stable rustc.
        "RUSTC_BOOTSTRAP": "1",
        "CARGO_NET_OFFLINE": "true",
        "CARGO_ENCODED_RUSTFLAGS": "\x1f".join(rustflags(capability)),
        "COOP_LLVM_LINK": str(toolchain.llvm_link),
        "COOP_LLVM_OPT": str(toolchain.llvm_opt),
        "COOP_LLVM_LLC": str(toolchain.llvm_llc),
    }
    linker = (crate / "llvm-bitcode-linker").resolve()
    command = [
        str(toolchain.cargo), "build", "--release", "--offline", "--target", TARGET, "-Zbuild-std=core",
        "--manifest-path", str(crate / "Cargo.toml"), "--target-dir", str(target_dir),
        "--message-format=json-render-diagnostics",
        # build-std resolves the standard library's own lock file: serve it from the vendored crates.
        "--config", 'source.crates-io.replace-with="coop-rust-src-vendor"',
        "--config", f"source.coop-rust-src-vendor.directory={json.dumps(str(toolchain.vendor))}",
        "--config", f"target.{TARGET}.linker={json.dumps(str(linker))}",
    ]
    started = time.monotonic()
    done = _run(command, capability, "cargo", env=env)
    cargo_seconds = time.monotonic() - started
    ptx = _artifact(done.stdout, capability)
    text = ptx.read_text()
    symbols = tuple(sorted(_ENTRY.findall(text)))
    isa = _PTX_ISA.search(text)
    if not symbols or isa is None:
        raise BuildError(f"{capability.sm}: cargo: {ptx} holds no PTX kernel entries")
    started = time.monotonic()
    cubin, cached = _ptxas(ptx, target_dir, capability, toolchain)
    return PassResult(
        capability, ptx, cubin, symbols, isa[1], cargo_seconds, time.monotonic() - started, cached
    )


def _artifact(messages: str, capability: Capability) -> Path:
    """The crate's PTX, from cargo's JSON messages (it sits wherever the target dir puts it)."""
    for line in messages.splitlines():
        if not line.startswith("{"):
            continue
        message = json.loads(line)
        if message.get("reason") == "compiler-artifact" and message["target"]["name"] == CRATE_LIB:
            for name in message["filenames"]:
                if name.endswith(".ptx"):
                    return Path(name)
    raise BuildError(f"{capability.sm}: cargo: the build reported no {CRATE_LIB}.ptx artifact")


def _ptxas(ptx: Path, target_dir: Path, capability: Capability, toolchain: Toolchain) -> tuple[Path, bool]:
    """The cubin of ``ptx``, reused when the same PTX went through the same ptxas (its version and its
    bytes, wherever it is installed) with the same flags before."""
    ptxas = [toolchain.ptxas.read_bytes(), toolchain.versions["ptxas"].encode(), *(f.encode() for f in PTXAS_FLAGS)]
    key = hashlib.sha256(b"\0".join([ptx.read_bytes(), *ptxas])).hexdigest()[:24]
    cubin = target_dir / "coop-ptxas" / f"{CRATE_LIB}.{capability.sm}.{key}.cubin"
    if cubin.is_file():
        return cubin, True
    cubin.parent.mkdir(parents=True, exist_ok=True)
    partial = cubin.with_suffix(f".{os.getpid()}.partial")
    _run([str(toolchain.ptxas), f"-arch={capability.sm}", *PTXAS_FLAGS, str(ptx), "-o", str(partial)],
         capability, "ptxas")
    partial.replace(cubin)
    return cubin, False


def _pack(passes: Sequence[PassResult], fatbin: Path, toolchain: Toolchain) -> None:
    """One fatbin: every pass's ELF, plus PTX for capabilities marked +PTX, nothing compressed."""
    with tempfile.TemporaryDirectory(prefix="coop-fatbin-") as tmp:
        # Staged under plain names: fatbinary splits --image3 values at ',' and '='.
        images = []
        for p in passes:
            arch = p.capability.arch
            shutil.copyfile(p.cubin, Path(tmp) / f"{p.capability.sm}.cubin")
            images.append(f"--image3=kind=elf,sm={arch},file={tmp}/{p.capability.sm}.cubin")
            if p.capability.ptx:
                shutil.copyfile(p.ptx, Path(tmp) / f"{p.capability.sm}.ptx")
                images.append(f"--image3=kind=ptx,sm={arch},file={tmp}/{p.capability.sm}.ptx")
        partial = Path(tmp) / FATBIN_NAME
        capabilities = ",".join(p.capability.sm for p in passes)
        _run([str(toolchain.fatbinary), "-64", "--compress=false", f"--create={partial}", *images],
             capabilities, "fatbinary")
        shutil.copyfile(partial, fatbin)


def _run(
    command: list[str], where: Capability | str, tool: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    label = where.sm if isinstance(where, Capability) else where
    try:
        done = subprocess.run(command, capture_output=True, text=True, env=env, check=False)
    except OSError as exc:
        raise BuildError(f"{label}: {tool}: cannot run {command[0]}: {exc}") from None
    if done.returncode:
        stderr = done.stderr.strip()
        if len(stderr) > STDERR_TAIL:
            stderr = "[...]\n" + stderr[-STDERR_TAIL:]
        raise BuildError(f"{label}: {tool} exited with {done.returncode}:\n{stderr}")
    return done


def source_crate() -> Path:
    """The kernel crate of a source checkout (beside ``src/``); an installed package has none."""
    return Path(__file__).resolve().parents[2] / "kernels"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m coopcheck_rustfatbin.build",
        description="Build the coop Rust kernel crate into a fatbin and its manifest.",
    )
    parser.add_argument("--archs", default=os.environ.get(ARCHS_ENV, DEFAULT_ARCHS),
                        help=f"capabilities, e.g. '8.0;9.0+PTX' (default: ${ARCHS_ENV} or {DEFAULT_ARCHS})")
    parser.add_argument("--crate", type=Path, default=source_crate(), help="the kernel crate (default: %(default)s)")
    parser.add_argument("--out", type=Path, default=Path(__file__).resolve().parent / "data",
                        help="output folder (default: the package's data folder, %(default)s)")
    parser.add_argument("--target-dir", type=Path, default=None,
                        help=f"root of the per-capability cargo target dirs (default: ${TARGET_DIR_ENV}, "
                             "else CRATE/target)")
    args = parser.parse_args(argv)
    try:
        if not (args.crate / "Cargo.toml").is_file():
            raise BuildError(f"{args.crate}: no Cargo.toml; pass --crate pointing at the kernel crate")
        build(args.crate, args.out, parse_capabilities(args.archs), target_root=args.target_dir)
    except BuildError as exc:
        print(f"coopcheck_rustfatbin.build: error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
