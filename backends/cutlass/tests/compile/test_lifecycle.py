"""Compiler lifecycle: a failed compile (refused static, injected error, unknown target) leaves the
DSL ready for the next one and caches nothing; repeated compiles hit the in-process cache, and a
fresh adapter reads the disk cache instead of compiling."""

from __future__ import annotations

from pathlib import Path

import coopcheck
import cutlass.cute as cute
import pytest
from coopcheck_cutlass import _per_thread
from coopcheck_cutlass.adapter import CutlassAdapter

from harness.inspect import inspect_artifacts, resource_violations

ARCH = "sm_90"
SPEC = coopcheck.KernelSpec("block.load", "float32", (32, 4), 4, "vectorize")


class Injected(RuntimeError):
    pass


@pytest.fixture
def compiles(monkeypatch: pytest.MonkeyPatch) -> list[object]:
    """Every host function handed to ``cute.compile`` from now on."""
    seen: list[object] = []
    real = cute.compile

    def counting(host: object, *args: object, **kwargs: object) -> object:
        seen.append(host)
        return real(host, *args, **kwargs)

    monkeypatch.setattr(cute, "compile", counting)
    return seen


def _clean(adapter: CutlassAdapter, spec: coopcheck.KernelSpec, resources: dict[str, object]) -> bool:
    report = inspect_artifacts(adapter.compile(spec, arch=ARCH).artifacts)
    return resource_violations(report, spec.algorithm, resources[spec.operation]) == []  # type: ignore[arg-type]


def test_an_error_while_tracing_caches_nothing_and_the_retry_compiles(
        monkeypatch: pytest.MonkeyPatch, resources: dict[str, object]) -> None:
    adapter = CutlassAdapter(disk_cache=False)

    def broken(*args: object, **kwargs: object) -> None:
        raise Injected("injected while tracing")

    with monkeypatch.context() as patched:
        patched.setattr(_per_thread, "move", broken)
        with pytest.raises(Injected):
            adapter.compile(SPEC, arch=ARCH)
    assert _clean(adapter, SPEC, resources)


def test_a_refused_static_while_tracing_leaves_the_dsl_ready(resources: dict[str, object]) -> None:
    adapter = CutlassAdapter(disk_cache=False)
    rejected = coopcheck.KernelSpec("block.store", "int8", (64,), 2, "direct", statics=(("static_offset", -3),))
    with pytest.raises(coopcheck.InvalidParameter, match=r"\[offset_negative\]"):
        adapter.compile(rejected, arch=ARCH)
    assert _clean(adapter, SPEC, resources)


def test_an_unknown_target_is_refused_by_name_and_the_next_compile_works(resources: dict[str, object]) -> None:
    adapter = CutlassAdapter(disk_cache=False)
    with pytest.raises(ValueError, match="the CuTe DSL has no target 'sm_999a'"):
        adapter.compile(SPEC, arch="sm_999")
    assert _clean(adapter, SPEC, resources)


def test_a_repeated_compile_hits_the_in_process_cache(compiles: list[object]) -> None:
    adapter = CutlassAdapter(disk_cache=False)
    first = adapter.compile(SPEC, arch=ARCH)
    assert adapter.compile(SPEC, arch=ARCH) is first
    assert adapter.compile(coopcheck.KernelSpec("block.load", "float32", (32, 4), 4, "vectorize"), arch=ARCH) is first
    assert len(compiles) == 1


def test_a_fresh_adapter_reads_the_disk_cache_and_compiles_only_to_launch(
        tmp_path: Path, compiles: list[object]) -> None:
    stored = CutlassAdapter(disk_cache=tmp_path).compile(SPEC, arch=ARCH)
    read = CutlassAdapter(disk_cache=tmp_path).compile(SPEC, arch=ARCH)
    assert len(compiles) == 1
    assert read.artifacts == stored.artifacts
    assert read.built is None and stored.built is not None


def test_variants_keep_their_own_dumps(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The DSL names dump files after the host function's argument types, which these share."""
    monkeypatch.setenv("COOP_CUTLASS_DUMP_DIR", str(tmp_path))
    adapter = CutlassAdapter(disk_cache=False)
    for algorithm in ("direct", "striped"):
        spec = coopcheck.KernelSpec("block.load", "int32", (64,), 2, algorithm)
        symbol = coopcheck.kernel_symbol(spec, include_block=True)
        adapter.compile(spec, arch=ARCH)
        (ptx,) = (tmp_path / "sm_90a" / symbol).glob("*.ptx")
        assert f".entry {symbol}_0(" in ptx.read_text()
