"""The backends' disk caches of compile artifacts: where one lives, and how an entry is written.

Standard library only (the base stays dependency-free). An entry is written to a temporary file and renamed
over its name, so parallel workers may share a folder and a reader never sees half an entry.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path
from types import ModuleType

#: Values of a cache variable that turn the cache off.
OFF = ("", "none")


def cache_root(variable: str, name: str) -> Path | None:
    """The folder ``$variable`` names; unset: ``name`` in the user's cache folder; empty or ``none``: no cache."""
    configured = os.environ.get(variable)
    if configured is None:
        return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / name
    return None if configured in OFF else Path(configured)


def write_atomically(path: Path, data: bytes) -> None:
    """``path`` holds ``data`` whole, or keeps what it held (a writer killed midway leaves only a temporary)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "wb") as file:
            file.write(data)
        os.replace(temporary, path)
    except BaseException:
        os.unlink(temporary)
        raise


def add_sources(digest: hashlib._Hash, *packages: ModuleType) -> None:
    """Feed ``digest`` every Python source file of ``packages`` (each by package and file name): a cache key over
    them changes with any edit to the code that builds a cached artifact, the shared ABI package's included."""
    for package in packages:
        if package.__file__ is None:
            raise ValueError(f"{package.__name__} has no source folder to key a cache by")
        folder = Path(package.__file__).parent
        for path in sorted(folder.glob("*.py")):
            digest.update(f"{folder.name}/{path.name}".encode() + b"\0" + path.read_bytes())
