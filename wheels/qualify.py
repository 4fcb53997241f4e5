"""``python -m wheels.qualify``: install the verified wheels into a fresh virtualenv and qualify them there.

The virtualenv is layered on the site-packages of the interpreter that runs this command (the
tox env), like ``--system-site-packages`` but for that environment: heavy third-party
requirements installed there (numba-cuda, nvidia-cutlass-dsl, cuda-bindings) are reused, not
downloaded, and what is missing is installed by pip into the virtualenv. The project's own wheels
always go into the virtualenv itself, ahead of the inherited folders on ``sys.path``. pytest then
runs ``wheels/qualification`` with the virtualenv's interpreter from a folder outside the
repository, so every project import resolves to the installed wheels.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import sysconfig
import tempfile
from collections.abc import Sequence
from pathlib import Path

from wheels import REPO_ROOT, WheelsError, add_dist_option, run_command
from wheels.install import install, pip_install
from wheels.manifest import MANIFEST_NAME

QUALIFICATION = REPO_ROOT / "wheels" / "qualification"
#: Third-party tools the qualification tests themselves need inside the virtualenv.
TEST_REQUIREMENTS = ("pytest>=8", "packaging>=23")


def make_venv(path: Path, *, inherit: bool) -> Path:
    """Create a virtualenv without pip of its own (``pip --python`` drives it); return its interpreter.

    With ``inherit``, a ``.pth`` file adds this interpreter's site-packages after the virtualenv's
    own, through ``site.addsitedir`` so that their ``.pth`` files (numba-cuda's redirector,
    the CuTe DSL's package path) take effect too.
    """
    command = [sys.executable, "-m", "venv", "--clear", "--without-pip", str(path)]
    status = subprocess.run(command, check=False).returncode
    if status:
        raise WheelsError(f"{path}: `python -m venv` exited {status}")
    python = path / "bin" / "python"
    if inherit:
        where = "import sysconfig; print(sysconfig.get_paths()['purelib'])"
        own = subprocess.run([str(python), "-c", where], capture_output=True, text=True, check=True).stdout
        folders = sorted({sysconfig.get_paths()[key] for key in ("purelib", "platlib")})
        lines = "".join(f"import site; site.addsitedir({folder!r})\n" for folder in folders)
        (Path(own.strip()) / "_coop_inherit.pth").write_text(lines, encoding="utf-8")
    return python


def qualify(dist: Path, workdir: Path, pytest_args: Sequence[str] = ()) -> int:
    """Verify and install ``dist`` into ``workdir/venv``, run the qualification there; pytest's status."""
    if workdir.resolve().is_relative_to(REPO_ROOT):
        raise WheelsError(f"{workdir}: the qualification must run outside the repository {REPO_ROOT}")
    python = make_venv(workdir / "venv", inherit=True)
    install(dist, python)
    pip_install(python, *TEST_REQUIREMENTS)
    run = workdir / "run"
    run.mkdir(exist_ok=True)
    command = [
        str(python), "-m", "pytest",
        # its own ini (-p no:cacheprovider, --import-mode=importlib), not the repository's
        "-c", str(QUALIFICATION / "pytest.ini"), "--rootdir", str(QUALIFICATION),
        f"--repo-root={REPO_ROOT}", f"--manifest={dist.resolve() / MANIFEST_NAME}",
        str(QUALIFICATION), *pytest_args,
    ]  # fmt: skip
    # No plugin of the inherited environment (nor of the wheels under test) joins the run uninvited.
    environment = {**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
    return subprocess.run(command, cwd=run, env=environment, check=False).returncode


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m wheels.qualify", description=__doc__.splitlines()[0])
    add_dist_option(parser)
    parser.add_argument(
        "--workdir",
        type=Path,
        help="where the virtualenv is made and kept, outside the repository (default: a temporary folder)",
    )
    parser.add_argument("pytest_args", nargs="*", help="passed to pytest (after --)")
    args = parser.parse_args(argv)
    if args.workdir is not None:
        args.workdir.mkdir(parents=True, exist_ok=True)
        return qualify(args.dist, args.workdir, args.pytest_args)
    with tempfile.TemporaryDirectory(prefix="coop-qualify-") as workdir:
        return qualify(args.dist, Path(workdir), args.pytest_args)


if __name__ == "__main__":
    sys.exit(run_command(main))
