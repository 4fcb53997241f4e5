"""``python -m wheels.install``: verify the dist folder against its manifest, then install exactly its wheels.

The project's own wheels come from the dist folder alone (``--no-index``, forced over any copy
already installed); their third-party requirements come from wherever pip is configured to look
(``PIP_INDEX_URL``, ``PIP_NO_INDEX``, ``PIP_FIND_LINKS``, ...). Nothing is installed unless every
wheel matches its recorded sha256.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

from wheels import WheelsError, add_dist_option, run_command
from wheels.manifest import Manifest, verify


def pip_install(python: Path, *args: str) -> None:
    """``pip install args`` into the environment of ``python``; raises :class:`WheelsError` when pip fails."""
    # This interpreter's pip drives the target (pip --python), so the target needs no pip of its own.
    command = [sys.executable, "-m", "pip", "--python", str(python), "install", "--quiet", *args]
    status = subprocess.run(command, check=False).returncode
    if status:
        raise WheelsError(f"{python}: `pip install {' '.join(args)}` exited {status}")


def install(dist: Path, python: Path, *, with_dependencies: bool = True) -> Manifest:
    """Install the wheels of ``dist`` into the environment of interpreter ``python``, verified first.

    ``with_dependencies=False`` installs the project's wheels only, for an environment that must
    lack their third-party requirements.
    """
    manifest = verify(dist)
    wheels = [str(dist / wheel.file) for wheel in manifest.wheels]
    pip_install(python, "--no-index", "--no-deps", "--force-reinstall", *wheels)
    if with_dependencies:
        # The project's wheels are installed now, so this resolves only their third-party requirements.
        pip_install(python, *wheels)
    return manifest


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m wheels.install", description=__doc__.splitlines()[0])
    add_dist_option(parser)
    parser.add_argument(
        "--python",
        type=Path,
        default=Path(sys.executable),
        help="interpreter of the target environment (default: this one)",
    )
    parser.add_argument(
        "--no-deps", action="store_true", help="install the project's wheels only, not their requirements"
    )
    args = parser.parse_args(argv)
    manifest = install(args.dist, args.python, with_dependencies=not args.no_deps)
    print(f"wheels: installed {len(manifest.wheels)} verified wheels into {args.python}")


if __name__ == "__main__":
    sys.exit(run_command(main))
