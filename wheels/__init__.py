"""Fresh-built wheels: build every distribution, record a manifest, verify, install and qualify them.

Commands: ``python -m wheels.build``, ``python -m wheels.verify``, ``python -m wheels.install``,
``python -m wheels.qualify``; each prints a :class:`WheelsError` as one line, without a traceback.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

#: The repository root: the folder that holds ``wheels/``.
REPO_ROOT = Path(__file__).resolve().parent.parent
#: Where ``wheels.build`` writes the wheels and ``manifest.json`` (ignored by git).
DIST = REPO_ROOT / "wheels" / "dist"


class WheelsError(Exception):
    """A build, manifest, verification or install problem; the message names the file and what is wrong."""


def add_dist_option(parser: argparse.ArgumentParser) -> None:
    """``--dist``: the folder of wheels and ``manifest.json`` a command reads."""
    parser.add_argument("--dist", type=Path, default=DIST, help="wheels and manifest.json (%(default)s)")


def run_command(main: Callable[[Sequence[str] | None], int | None], argv: Sequence[str] | None = None) -> int:
    """Run a command's ``main``, return its exit status; a :class:`WheelsError` prints one line, status 1."""
    try:
        return main(argv) or 0
    except WheelsError as exc:
        print(f"wheels: error: {exc}", file=sys.stderr)
        return 1
