"""The backends' shared cache helpers: one rule for where a cache lives, one atomic write."""

from __future__ import annotations

from pathlib import Path

import pytest
from coopcheck.cachefiles import cache_root, write_atomically


@pytest.mark.parametrize(("value", "expected"), [(None, "home"), ("", None), ("none", None), ("named", "named")])
def test_the_variable_names_the_folder(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, value: str | None,
                                       expected: str | None) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    if value is None:
        monkeypatch.delenv("EXAMPLE_CACHE_DIR", raising=False)
    else:
        monkeypatch.setenv("EXAMPLE_CACHE_DIR", str(tmp_path / value) if value == "named" else value)
    want = {"home": tmp_path / "home" / ".cache" / "example", "named": tmp_path / "named", None: None}[expected]
    assert cache_root("EXAMPLE_CACHE_DIR", "example") == want


def test_a_failed_write_keeps_the_old_entry_and_leaves_nothing(tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    entry = tmp_path / "cache" / "k.bin"
    write_atomically(entry, b"old")
    monkeypatch.setattr("os.replace", lambda *args: (_ for _ in ()).throw(OSError("disk full")))
    with pytest.raises(OSError, match="disk full"):
        write_atomically(entry, b"new")
    assert entry.read_bytes() == b"old" and sorted(p.name for p in entry.parent.iterdir()) == ["k.bin"]
