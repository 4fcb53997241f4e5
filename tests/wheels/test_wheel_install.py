"""Installing verified wheels into a given environment, and refusing tampered ones before pip runs."""

from __future__ import annotations

import json
import subprocess
import sysconfig
from pathlib import Path

import pytest

from wheels import REPO_ROOT, WheelsError, install, run_command
from wheels.install import install as install_wheels
from wheels.qualify import make_venv, qualify


def installed(python: Path) -> list[str]:
    code = "import importlib.metadata as m; print(*sorted(d.metadata['Name'] for d in m.distributions()))"
    # -I: the working directory (a source checkout may hold an .egg-info) must not count as installed
    return subprocess.run([str(python), "-I", "-c", code], capture_output=True, text=True, check=True).stdout.split()


def test_install_puts_exactly_the_wheels_in(dist_copy: Path, tmp_path: Path) -> None:
    python = make_venv(tmp_path / "venv", inherit=False)
    install_wheels(dist_copy, python, with_dependencies=False)
    assert installed(python) == ["tiny-base", "tiny_plug"]


def test_a_tampered_wheel_is_refused_and_nothing_installed(
    dist_copy: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    wheel = next(dist_copy.glob("tiny_base-*.whl"))
    wheel.write_bytes(wheel.read_bytes()[:-1])
    python = make_venv(tmp_path / "venv", inherit=False)
    status = run_command(install.main, ["--dist", str(dist_copy), "--python", str(python), "--no-deps"])
    error = capsys.readouterr().err
    assert status == 1
    assert error.startswith("wheels: error: ") and f"{wheel.name}: sha256 is" in error
    assert installed(python) == []


def test_an_inheriting_venv_sees_this_environment_after_its_own(tmp_path: Path) -> None:
    python = make_venv(tmp_path / "venv", inherit=True)
    code = (
        "import json, sys, sysconfig, pytest;"
        "print(json.dumps([sys.path, sysconfig.get_paths()['purelib'], pytest.__file__]))"
    )
    path, own, found = json.loads(
        subprocess.run([str(python), "-c", code], capture_output=True, text=True, check=True).stdout
    )
    inherited = sysconfig.get_paths()["purelib"]
    assert Path(own).is_relative_to(tmp_path / "venv")
    assert Path(found).is_relative_to(inherited), "pytest comes from the inherited site-packages"
    assert path.index(own) < path.index(inherited), "the virtualenv's own packages come first"


def test_qualification_refuses_to_run_inside_the_repository(dist_copy: Path) -> None:
    with pytest.raises(WheelsError, match="must run outside the repository"):
        qualify(dist_copy, REPO_ROOT / "wheels")
