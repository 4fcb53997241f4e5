"""The LTO-IR cache in front of cuda.coop's one NVRTC call per factory."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from coopcheck_cccl import cache

SOURCE = {"cpp": "#include <cub/block/block_load.cuh>\n...", "cc": 90, "rdc": True, "code": "lto"}


@pytest.fixture
def nvrtc(monkeypatch: pytest.MonkeyPatch) -> SimpleNamespace:
    """A stand-in for cuda.coop's ``_nvrtc`` module that counts its compiles."""
    monkeypatch.setattr(cache, "_nvrtc_version", lambda: (13, 0))
    calls: list[dict[str, Any]] = []

    def compile(**kwargs: Any) -> tuple[Any, bytes]:
        calls.append(kwargs)
        return (13, 0), f"LTO of {kwargs['cc']} {kwargs['cpp']}".encode()

    return SimpleNamespace(compile=compile, calls=calls)


def _compile(store: cache.LtoCache | None, module: SimpleNamespace, release: str = "1.1.1", **change: Any) -> bytes:
    with cache.serving(store, module, release):
        return module.compile(**(SOURCE | change))[1]  # type: ignore[no-any-return]


def test_a_second_compile_is_served_from_disk(tmp_path: Path, nvrtc: SimpleNamespace) -> None:
    first = _compile(cache.LtoCache(tmp_path), nvrtc)
    again = cache.LtoCache(tmp_path)  # another process: nothing in memory
    assert _compile(again, nvrtc) == first
    assert len(nvrtc.calls) == 1 and (again.hits, again.misses) == (1, 0)


@pytest.mark.parametrize("change", [{"cc": 100}, {"cpp": "other specialization"}, {"release": "1.1.2"}])
def test_anything_that_decides_the_output_is_in_the_key(tmp_path: Path, nvrtc: SimpleNamespace,
                                                        change: dict[str, Any]) -> None:
    _compile(cache.LtoCache(tmp_path), nvrtc)
    _compile(cache.LtoCache(tmp_path), nvrtc, **change)
    assert len(nvrtc.calls) == 2


def test_the_nvrtc_version_is_in_the_key(tmp_path: Path, nvrtc: SimpleNamespace,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    _compile(cache.LtoCache(tmp_path), nvrtc)
    monkeypatch.setattr(cache, "_nvrtc_version", lambda: (13, 1))
    _compile(cache.LtoCache(tmp_path), nvrtc)
    assert len(nvrtc.calls) == 2


def test_the_module_is_restored_even_when_a_compile_fails(tmp_path: Path, nvrtc: SimpleNamespace) -> None:
    original = nvrtc.compile
    with pytest.raises(KeyError), cache.serving(cache.LtoCache(tmp_path), nvrtc, "1.1.1"):
        nvrtc.compile(cc=90)  # no cpp: the key is made, the stand-in raises
    assert nvrtc.compile is original and not list(tmp_path.iterdir())


def test_no_cache_leaves_the_compile_alone(nvrtc: SimpleNamespace) -> None:
    original = nvrtc.compile
    with cache.serving(None, nvrtc, "1.1.1"):
        assert nvrtc.compile is original


@pytest.mark.parametrize(("value", "expected"), [(None, "home"), ("", None), ("named", "named")])
def test_the_environment_names_the_directory(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                             value: str | None, expected: str | None) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    if value is None:
        monkeypatch.delenv(cache.ENV, raising=False)
    else:
        monkeypatch.setenv(cache.ENV, str(tmp_path / value) if value else "")
    found = cache.LtoCache.from_environment()
    want = {"home": tmp_path / "home" / ".cache" / "coopcheck-cccl", "named": tmp_path / "named", None: None}[expected]
    assert (found.root if found else None) == want
