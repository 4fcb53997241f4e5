"""``coopcheck.require``: a backend whose toolchain is missing is refused by name, without importing anything."""

from __future__ import annotations

import sys
from pathlib import Path

import coopcheck
import pytest
from coopcheck.availability import BackendUnavailable, require


def test_installed_modules_pass() -> None:
    require("example", {"json": "the standard library", "coopcheck": "coopcheck"})


def test_missing_modules_are_named_with_what_to_install() -> None:
    modules = {"json": "stdlib", "absent_one_x": "absent-dist", "absent_two_x": "absent-dist"}
    with pytest.raises(BackendUnavailable) as refused:
        require("example", modules)
    error = refused.value
    assert (error.backend, error.missing, error.name) == (
        "example",
        {"absent_one_x": "absent-dist", "absent_two_x": "absent-dist"},
        "absent_one_x",
    )
    assert str(error) == (
        "backend 'example' is unavailable: module 'absent_one_x' (distribution absent-dist), "
        "module 'absent_two_x' (distribution absent-dist) not installed; try: pip install absent-dist"
    )
    assert isinstance(error, ImportError), "code that guards an import with `except ImportError` still works"


def test_modules_are_found_not_imported(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "heavy_toolchain_x.py").write_text("raise RuntimeError('imported')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    require("example", {"heavy_toolchain_x": "heavy"})
    assert "heavy_toolchain_x" not in sys.modules


def test_dotted_names_are_refused() -> None:
    with pytest.raises(ValueError, match=r"give top-level module names, not \['numba.cuda'\]"):
        require("example", {"numba.cuda": "numba-cuda"})


def test_the_base_exports_it() -> None:
    assert (coopcheck.require, coopcheck.BackendUnavailable) == (require, BackendUnavailable)
