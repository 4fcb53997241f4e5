"""The crate is built from one path per cache: cargo keys its cache by the crate's path, and every isolated
wheel build (pip, ``python -m build``) unpacks the sources somewhere new, which cost a cold build of core
(about a minute per capability) on every wheel build."""

from __future__ import annotations

import os
from pathlib import Path

from coopcheck_rustfatbin.build import stage_crate


def _crate(root: Path, lib: str) -> Path:
    (root / "src").mkdir(parents=True)
    (root / "Cargo.toml").write_text("[package]\nname = 'k'\n")
    (root / "src" / "lib.rs").write_text(lib)
    (root / "target").mkdir()
    (root / "target" / "junk").write_text("build output, never staged")
    return root


def test_two_source_paths_build_from_one_staged_path(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    first = stage_crate(_crate(tmp_path / "unpacked-1", "fn a() {}"), cache)
    mtime = (first / "Cargo.toml").stat().st_mtime_ns
    os.utime(first / "Cargo.toml", ns=(mtime - 10**9, mtime - 10**9))  # older than any new copy could be
    second = stage_crate(_crate(tmp_path / "unpacked-2", "fn b() {}"), cache)
    assert first == second and first.is_relative_to(cache)
    assert (second / "src" / "lib.rs").read_text() == "fn b() {}"
    assert (second / "Cargo.toml").stat().st_mtime_ns == mtime - 10**9, "an unchanged file was rewritten"
    assert not (second / "target").exists()


def test_a_file_gone_from_the_crate_is_gone_from_the_stage(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    crate = _crate(tmp_path / "crate", "fn a() {}")
    (crate / "src" / "old.rs").write_text("fn old() {}")
    stage_crate(crate, cache)
    (crate / "src" / "old.rs").unlink()
    staged = stage_crate(crate, cache)
    assert sorted(p.relative_to(staged).as_posix() for p in staged.rglob("*") if p.is_file()) == [
        "Cargo.toml", "src/lib.rs"]


def test_the_linker_script_stays_executable(tmp_path: Path) -> None:
    crate = _crate(tmp_path / "crate", "")
    (crate / "llvm-bitcode-linker").write_text("#!/bin/sh\n")
    (crate / "llvm-bitcode-linker").chmod(0o755)
    staged = stage_crate(crate, tmp_path / "cache")
    assert os.access(staged / "llvm-bitcode-linker", os.X_OK)


def test_a_changed_file_is_staged_newer_than_the_last_build_however_old_its_own_time(tmp_path: Path) -> None:
    """cargo rebuilds a source only if it is newer than the build's record of it; a file edited before the cache's
    last build (an older branch, another checkout sharing the cache) once kept its own time in the stage, and the
    wheel shipped the kernels of the previous build: a raking Scan fix built into a fatbin without it."""
    cache = tmp_path / "cache"
    crate = _crate(tmp_path / "crate", "fn a() {}")
    staged = stage_crate(crate, cache)
    built = (staged / "src" / "lib.rs").stat().st_mtime_ns  # the build's record of the source, as it was staged
    (crate / "src" / "lib.rs").write_text("fn b() {}")
    os.utime(crate / "src" / "lib.rs", ns=(built - 10**10, built - 10**10))  # edited ten seconds before that build
    stage_crate(crate, cache)
    assert (staged / "src" / "lib.rs").read_text() == "fn b() {}"
    assert (staged / "src" / "lib.rs").stat().st_mtime_ns > built
