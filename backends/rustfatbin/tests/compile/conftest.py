"""The crate built once per session for two capabilities, 8.0 and 9.0 with its PTX, into a temporary
folder. The cargo target dirs and ptxas outputs are the build's cache (``COOP_RUST_TARGET_DIR`` or
``kernels/target``): a cold build takes about a minute per capability on 2 cores, a warm one seconds."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from coopcheck import KernelSpec
from coopcheck.families import check_spec
from coopcheck_rustfatbin import abi
from coopcheck_rustfatbin.adapter import CompiledKernel, RustFatbinAdapter
from coopcheck_rustfatbin.build import FATBIN_NAME, build, parse_capabilities
from coopcheck_rustfatbin.toolchain import Toolchain

ARCHS = "8.0;9.0+PTX"
#: The crate of this checkout (the tests may run against an installed package, which has none).
CRATE = Path(__file__).resolve().parents[2] / "kernels"


@dataclass(frozen=True)
class Built:
    crate: Path
    fatbin: Path
    manifest: dict[str, Any]

    @property
    def data(self) -> bytes:
        return self.fatbin.read_bytes()


@pytest.fixture(scope="session")
def built(tmp_path_factory: pytest.TempPathFactory) -> Built:
    out = tmp_path_factory.mktemp("fatbin")
    manifest = build(CRATE, out, parse_capabilities(ARCHS))
    assert json.loads((out / "coop_kernels.json").read_text()) == manifest
    return Built(CRATE, out / FATBIN_NAME, manifest)


#: The host runs of the crate's kernel bodies (``tests/hostrun/<name>.rs``).
HOSTRUN = Path(__file__).resolve().parents[1] / "hostrun"


@pytest.fixture(scope="session")
def host_run_build(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str, str, str], Path]:
    """``build(name, points_env, dispatch)``: the host build of ``hostrun/<name>.rs`` with ``dispatch`` (Rust source
    naming the entries it runs) included from ``$<points_env>``."""

    def host_build(name: str, points_env: str, dispatch: str) -> Path:
        folder = tmp_path_factory.mktemp(name)
        (folder / "points.rs").write_text(dispatch)
        binary = folder / name
        built = subprocess.run([str(Toolchain.discover().rustc), "--edition", "2024", "-C", "opt-level=1",
                                str(HOSTRUN / f"{name}.rs"), "-o", str(binary)], capture_output=True, text=True,
                               check=False, env={points_env: str(folder / "points.rs"), "PATH": "/usr/bin:/bin"})
        assert built.returncode == 0, built.stderr
        return binary

    return host_build


class HostRunAdapter(RustFatbinAdapter):
    """The rustfatbin adapter whose launches run a host build of the kernel bodies (``binary``, its files in
    ``folder``) with the arguments a GPU launch would get; ``run(adapter, compiled, spec, batch)`` hands them over
    as that host run takes them and returns its output."""

    def __init__(self, binary: Path, folder: Path, run: Callable[[HostRunAdapter, CompiledKernel, KernelSpec, Any],
                                                                   Any]) -> None:
        super().__init__(folder / "unused.fatbin")
        self.binary, self.folder, self._run = binary, folder, run

    def compile(self, spec: KernelSpec, *, arch: str) -> CompiledKernel:
        check_spec(spec)
        return CompiledKernel(abi.entry_symbol(spec), arch, abi.dynamic_shared_bytes(spec))

    def launch(self, compiled: CompiledKernel, spec: KernelSpec, batch: Any) -> Any:
        return self._run(self, compiled, spec, batch)


@pytest.fixture(scope="session")
def host_run_adapter() -> type[HostRunAdapter]:
    """The adapter class of the host runs (a fixture: the test modules are not a package)."""
    return HostRunAdapter


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """This folder's tests of one arch's SASS go to one xdist worker (``--dist loadgroup``): the worker lists that
    arch's image of the fatbin (about 20 s each), not every worker both. First, since xdist's own hook reads the
    marks into the ids that loadgroup schedules by. Inert with pytest 9.2 and pytest-xdist 3.8, whose loadgroup
    groups nothing (pytest-dev/pytest-xdist#1386: it writes the group into ``_nodeid``, which pytest 9.2 no longer
    reads); the listing cache's lock then has a second worker wait for the first one's listing."""
    here = Path(__file__).parent
    for item in items:
        callspec = getattr(item, "callspec", None)
        if callspec is not None and "arch" in callspec.params and item.path.is_relative_to(here):
            item.add_marker(pytest.mark.xdist_group(f"rustfatbin-{callspec.params['arch']}"))
