"""Output folders that appear whole: filled aside, beside their destination, then swapped in at once, so a
process killed while it writes leaves the older folder or the new one, never a mix of the two.

Linux swaps two folders in one step (``renameat2`` with ``RENAME_EXCHANGE``); elsewhere the older folder is
moved aside first, leaving, for the instant between two renames, no folder rather than a mixed one.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import glob
import os
import shutil
import uuid
from collections.abc import Iterator
from pathlib import Path

_AT_FDCWD = -100
_RENAME_EXCHANGE = 2
_UNSUPPORTED = (errno.ENOSYS, errno.EINVAL, errno.ENOTSUP, errno.EOPNOTSUPP)


def _exchange(a: Path, b: Path) -> bool:
    """Swap the paths ``a`` and ``b`` in one step; False where the system or its file system cannot."""
    try:
        renameat2 = ctypes.CDLL(None, use_errno=True).renameat2
    except (OSError, AttributeError):
        return False
    renameat2.argtypes = (ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint)
    if renameat2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE) == 0:
        return True
    code = ctypes.get_errno()
    if code in _UNSUPPORTED:
        return False
    raise OSError(code, os.strerror(code), str(b))


def _aside(dest: Path, role: str) -> Path:
    """A name beside ``dest`` for a folder of this process: hidden, and naming the process that made it."""
    return dest.with_name(f".{dest.name}.{role}-{os.getpid()}-{uuid.uuid4().hex[:8]}")


def _remove_leftovers(dest: Path) -> None:
    """Remove the folders that processes killed while writing ``dest`` left beside it."""
    for path in dest.parent.glob(f".{glob.escape(dest.name)}.*-*-*"):
        pid = path.name.rsplit("-", 2)[-2]
        if not pid.isdigit():
            continue
        try:
            os.kill(int(pid), 0)
        except ProcessLookupError:
            shutil.rmtree(path, ignore_errors=True)
        except PermissionError:  # another user's live process
            continue


@contextlib.contextmanager
def beside(dest: Path) -> Iterator[Path]:
    """A new empty folder beside ``dest`` (hidden, named after this process), gone when the block ends; the
    leftovers of writers of ``dest`` that were killed go first."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    _remove_leftovers(dest)
    new = _aside(dest, "new")
    new.mkdir()
    try:
        yield new
    finally:
        shutil.rmtree(new, ignore_errors=True)


@contextlib.contextmanager
def swapped_in(dest: Path) -> Iterator[Path]:
    """A new empty folder beside ``dest`` to fill; when the block ends it takes ``dest``'s place at once (an
    older ``dest`` is removed after). On an error the new folder goes and ``dest`` is as it was."""
    with beside(dest) as new:
        yield new
        if not dest.exists() or (dest.is_dir() and not any(dest.iterdir())):
            os.replace(new, dest)  # onto nothing or an empty folder: one step anywhere
        elif not _exchange(new, dest):  # exchanged, ``new`` holds the older folder, which ``beside`` removes
            old = _aside(dest, "old")
            os.rename(dest, old)
            os.rename(new, dest)
            shutil.rmtree(old)
