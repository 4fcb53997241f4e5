"""``python -m wheels.build``: build every distribution's wheel fresh and write the manifest.

Fresh means from a copy of the files a clone would have plus the work tree's changes (tracked
and untracked, never ignored build output), each with ``python -m build --wheel`` in its own
isolated build environment, into a dist folder wiped first.
"""

from __future__ import annotations

import argparse
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from importlib.metadata import version
from pathlib import Path

from wheels import DIST, REPO_ROOT, WheelsError, run_command
from wheels.manifest import MANIFEST_NAME, Manifest, WheelRecord, write_manifest
from wheels.native import native_builds
from wheels.projects import PYPROJECT_GLOBS, Project, discover, source_files, source_state
from wheels.wheelfile import Wheel, read_wheel, sha256

#: Lines of a failed build's log shown in the error; the whole log stays in ``<dist>/logs``.
LOG_TAIL = 40


def export_tree(root: Path, destination: Path) -> None:
    """Copy the files of :func:`wheels.projects.source_files` so that no stale build output is seen."""
    for relative in source_files(root):
        target = destination / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(root / relative, target)


def build_project(project: Project, tree: Path, out: Path, logs: Path, *, isolation: bool) -> Wheel:
    """Build one wheel from the exported ``tree`` into ``out``; the build's output goes to ``logs``."""
    staging = out / f".{project.name}"
    command = [
        sys.executable,
        "-m",
        "build",
        "--wheel",
        "--outdir",
        str(staging),
        str(tree / project.directory),
    ]
    if not isolation:
        command.append("--no-isolation")
    log = logs / f"{project.name}.log"
    with log.open("w", encoding="utf-8") as stream:
        status = subprocess.run(command, stdout=stream, stderr=subprocess.STDOUT, check=False).returncode
    if status:
        tail = log.read_text(encoding="utf-8").splitlines()[-LOG_TAIL:]
        raise WheelsError(
            f"{project.directory}: `python -m build --wheel` exited {status}; last lines of {log}:\n" + "\n".join(tail)
        )
    built = sorted(staging.glob("*.whl"))
    if len(built) != 1:
        raise WheelsError(f"{project.directory}: expected one wheel, built {[p.name for p in built]}")
    wheel = read_wheel(built[0].rename(out / built[0].name))
    staging.rmdir()
    return wheel


def build_all(root: Path, out: Path, *, isolation: bool = True) -> Manifest:
    """Wipe ``out``, build every distribution of ``root`` into it and write its manifest."""
    projects = discover(root)
    if not projects:
        raise WheelsError(f"{root}: no distribution matches {', '.join(PYPROJECT_GLOBS)}")
    commit, dirty = source_state(root)
    if out.exists():
        shutil.rmtree(out)
    logs = out / "logs"
    logs.mkdir(parents=True)
    records = []
    with tempfile.TemporaryDirectory(prefix="coop-wheels-") as scratch:
        tree = Path(scratch)
        export_tree(root, tree)
        for project in projects:
            started = time.monotonic()
            wheel = build_project(project, tree, out, logs, isolation=isolation)
            print(f"wheels: built {wheel.path.name} in {time.monotonic() - started:.1f}s", flush=True)
            records.append(
                WheelRecord(
                    name=wheel.name,
                    version=wheel.version,
                    file=wheel.path.name,
                    sha256=sha256(wheel.path),
                    project=str(project.directory),
                    build_backend=wheel.generator,
                    native=native_builds(wheel),
                )
            )
    toolchain = {"python": platform.python_version(), "build": version("build")}
    manifest = Manifest(commit, dirty, toolchain, tuple(records))
    write_manifest(manifest, out / MANIFEST_NAME)
    state = f"{commit[:12]}{' + changes' if dirty else ''}" if commit else "no commit yet"
    print(f"wheels: {len(records)} wheels and {MANIFEST_NAME} in {out} (source: {state})")
    return manifest


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m wheels.build", description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=DIST, help="dist folder, wiped first (%(default)s)")
    parser.add_argument(
        "--no-isolation",
        action="store_true",
        help="build with this environment's build backends instead of a fresh one per build (offline use)",
    )
    args = parser.parse_args(argv)
    build_all(REPO_ROOT, args.out.resolve(), isolation=not args.no_isolation)


if __name__ == "__main__":
    sys.exit(run_command(main))
