"""Whole-image SASS listings kept on disk between processes.

nvdisasm takes about 20 s to list a fatbin's cubin of 5,000 kernels (rustfatbin's sm_90 image), and every process
that inspects one of its kernels needs that listing: each xdist worker of the compile tests, then each shard of the
host lane, then the next run. The folder is ``$COOP_SASS_CACHE_DIR`` (unset: ``coopcheck-sass`` in the user's cache
folder; empty or ``none``: no cache). An entry is named by the image's sha256 and nvdisasm's identity (its path, size
and modification time), so another nvdisasm lists afresh. It is written whole
(:func:`coopcheck.cachefiles.write_atomically`) and gzip-compressed (about a third of the text). Processes that miss
one entry at once list it once: the first takes a lock file beside the entry, the others wait on it, then read.
"""

from __future__ import annotations

import fcntl
import gzip
import hashlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from coopcheck.cachefiles import cache_root, write_atomically

ENV = "COOP_SASS_CACHE_DIR"


def cached(sha256: str, tool: Path, list_image: Callable[[], str]) -> str:
    """The listing of the image of ``sha256`` by ``tool``: from the cache, else ``list_image()``, then kept."""
    root = cache_root(ENV, "coopcheck-sass")
    if root is None:
        return list_image()
    stat = tool.stat()
    key = hashlib.sha256(f"{sha256}\0{tool}\0{stat.st_size}\0{stat.st_mtime_ns}".encode()).hexdigest()[:40]
    entry = root / f"{key}.sass.gz"
    if (text := _read(entry)) is not None:
        return text
    with _listing(entry):
        if (text := _read(entry)) is not None:  # listed by the process this one waited for
            return text
        text = list_image()
        write_atomically(entry, gzip.compress(text.encode(), compresslevel=1, mtime=0))
    return text


@contextmanager
def _listing(entry: Path) -> Iterator[None]:
    """Held by the one process that lists ``entry``'s image. Its lock file goes once the entry is written (before
    the lock is let go, so that a waiter finds the entry); a process that failed or was killed leaves it unlocked."""
    lock = entry.with_name(f"{entry.name}.lock")
    lock.parent.mkdir(parents=True, exist_ok=True)
    with lock.open("a") as file:
        fcntl.flock(file, fcntl.LOCK_EX)
        yield
        lock.unlink(missing_ok=True)


def _read(entry: Path) -> str | None:
    try:
        return gzip.decompress(entry.read_bytes()).decode()
    except (OSError, EOFError, UnicodeDecodeError):  # absent, or damaged from outside: listed afresh
        return None
