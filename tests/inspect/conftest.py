"""Real sm_90 cubins for the inspector's tests, built from the small CUDA C kernels in ``kernels/``.

Each (source, flags) pair compiles once: the cubin and ptxas's ``-v`` log are kept in pytest's
cache folder under the sha256 of nvcc's version, the flags and the source, so later sessions and
other xdist workers reuse them. nvcc is found like every tool the inspector runs (pip
``nvidia-cuda-nvcc``, then PATH, then CUDA_HOME); without it these tests error, naming that
requirement, rather than skip.
"""

from __future__ import annotations

import functools
import hashlib
import os
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import coopcheck
import pytest

from harness.inspect import KernelReport, inspect_artifacts, listings
from harness.inspect import sass as sass_module
from harness.inspect.tools import locate_tool

KERNELS = Path(__file__).parent / "kernels"
#: Sources compiled as relocatable code and then device-linked, as separately compiled code is.
DEVICE_LINKED = frozenset({"separate_call"})
ARCH = "sm_90"


@dataclass(frozen=True)
class Built:
    """One compiled fixture source: the cubin and what ptxas said about it."""

    source: str
    cubin: bytes
    ptxas_log: str

    def artifacts(self, kernel: str, *, dynamic_shared_bytes: int = 0) -> coopcheck.Artifacts:
        return coopcheck.Artifacts(
            kernel_name=kernel, cubin=self.cubin, arch=ARCH, dynamic_shared_bytes=dynamic_shared_bytes
        )


@pytest.fixture(scope="session")
def build(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Callable[..., Built]:
    """``build("plain")`` or ``build("plain", "-rdc=true")``: the cubin of ``kernels/plain.cu``."""
    nvcc = locate_tool("nvcc", "nvidia-cuda-nvcc")
    version = subprocess.run([nvcc, "--version"], capture_output=True, text=True, check=True).stdout
    # -p no:cacheprovider leaves no cache folder; then the cubins live for this session only.
    cache = request.config.cache if hasattr(request.config, "cache") else None
    folder = cache.mkdir("inspect-cubins") if cache else tmp_path_factory.mktemp("inspect-cubins")

    def run(*arguments: str) -> str:
        done = subprocess.run([str(nvcc), *arguments], capture_output=True, text=True)
        if done.returncode != 0:
            raise RuntimeError(f"nvcc {' '.join(arguments)} failed:\n{done.stdout}{done.stderr}")
        return done.stdout + done.stderr

    @functools.cache
    def compile_source(source: str, *flags: str) -> Built:
        path = KERNELS / f"{source}.cu"
        linked = source in DEVICE_LINKED
        command = ["-cubin", f"-arch={ARCH}", "-Xptxas", "-v", *flags, *(["-rdc=true"] if linked else [])]
        key = hashlib.sha256("\0".join([version, *command, path.read_text()]).encode()).hexdigest()[:24]
        cubin, log = folder / f"{source}-{key}.cubin", folder / f"{source}-{key}.ptxas.txt"
        if not cubin.exists():
            partial = folder / f"{source}-{key}.{os.getpid()}.partial"
            partial.with_suffix(".log").write_text(run(*command, "-o", str(partial), str(path)))
            if linked:
                relocatable = partial.rename(partial.with_suffix(".rel.cubin"))  # nvcc goes by suffix
                run(f"-arch={ARCH}", "-dlink", "-cubin", "-o", str(partial), str(relocatable))
                relocatable.unlink()
            # Renames are atomic, and the cubin goes last: whoever sees it finds the log complete.
            os.replace(partial.with_suffix(".log"), log)
            os.replace(partial, cubin)
        return Built(source, cubin.read_bytes(), log.read_text())

    return compile_source


@pytest.fixture(scope="session")
def report_of(build: Callable[..., Built]) -> Callable[..., KernelReport]:
    """``report_of("plain")``, ``report_of("mixed_module", "mixed_dynamic", dynamic_shared_bytes=512)``."""

    def report(source: str, kernel: str | None = None, *, dynamic_shared_bytes: int = 0) -> KernelReport:
        artifacts = build(source).artifacts(kernel or source, dynamic_shared_bytes=dynamic_shared_bytes)
        return inspect_artifacts(artifacts)

    return report


@pytest.fixture
def nvdisasm_runs(monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    """The command of every subprocess the test runs from here on, with this process's listings forgotten and none on
    disk: build the fixtures first (nvcc runs count too), then compare the count of runs before and after what the test
    measures."""
    monkeypatch.setattr(sass_module, "_listings", {})
    monkeypatch.setenv(listings.ENV, "")  # nor listings kept on disk, unless the test names a folder
    runs: list[list[str]] = []
    real_run = subprocess.run

    def counting_run(command, *args, **kwargs):  # type: ignore[no-untyped-def]
        runs.append(command)
        return real_run(command, *args, **kwargs)

    monkeypatch.setattr(subprocess, "run", counting_run)
    return runs
