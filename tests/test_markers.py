"""Every mark the tests use is registered in the project's own configuration, so that ``--strict-markers`` holds
with any plugin left out: ``-p no:xdist`` (one process, e.g. to debug a compile test) stopped rustfatbin's compile
tests at collection, their ``xdist_group`` mark having been registered by pytest-xdist alone."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
USED = re.compile(r"pytest\.mark\.([A-Za-z_]\w*)")


def _used_marks() -> set[str]:
    sources = [*(ROOT / "tests").rglob("*.py"), *(ROOT / "backends").glob("*/tests/**/*.py")]
    return {name for path in sources for name in USED.findall(path.read_text(encoding="utf-8"))}


def _registered_without_xdist() -> set[str]:
    listed = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:xdist", "-p", "no:cacheprovider", "--markers"],
                            cwd=ROOT, capture_output=True, text=True, check=True).stdout
    return set(re.findall(r"^@pytest\.mark\.([A-Za-z_]\w*)", listed, re.MULTILINE))


def test_every_mark_the_tests_use_is_registered_without_xdist() -> None:
    assert _used_marks() - _registered_without_xdist() == set()
