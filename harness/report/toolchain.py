"""A nightly lane's fresh environment: a new virtualenv, the fresh wheels, the lane's toolchain pins, an import probe.

The project's wheels go in first (``python -m wheels.install``, their requirements as configured), then the
combination's pins over them (an older release than the wheels ask for is the point of the lane; those of a
``no_deps`` value without their own requirements), then a probe imports the toolchain's modules and reads the
installed versions back. A step that fails makes the
toolchain unavailable, with why; the nightly records that as the lane's status and goes on.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from packaging.requirements import InvalidRequirement, Requirement

from harness.report.history import Rebuild
from harness.report.matrix import Combination

#: Builds the fresh environment of a combination in a folder, logging to a file: the toolchain installed
#: (distribution -> version), or why it is unavailable.
Installer = Callable[[Combination, Path, Path], "dict[str, str] | str"]
#: Run in the new environment: imports the modules named, prints the installed version of each distribution.
PROBE = """import importlib, importlib.metadata as md, json, sys
wanted = json.loads(sys.argv[1])
for module in wanted["imports"]:
    try:
        importlib.import_module(module)
    except Exception as exc:
        sys.exit(f"import {module}: {type(exc).__name__}: {exc}")
found = {}
for name in wanted["dists"]:
    try:
        found[name] = md.version(name)
    except md.PackageNotFoundError:
        sys.exit(f"{name} is not installed")
print(json.dumps(found))
"""


def _last_line(log: Path) -> str:
    lines = [line.strip() for line in log.read_text(encoding="utf-8", errors="replace").splitlines() if line.strip()]
    return lines[-1] if lines else "no output"


def env_python(env: Path) -> Path:
    return env / ("Scripts/python.exe" if os.name == "nt" else "bin/python")


def interpreter_of(combo: Combination) -> str:
    """The interpreter a combination needs (``python:X.Y``): this one when it is that version, else pythonX.Y."""
    for need in combo.needs:
        if need.startswith("python:"):
            version = need.partition(":")[2]
            if version == f"{sys.version_info.major}.{sys.version_info.minor}":
                return sys.executable
            return shutil.which(f"python{version}") or f"python{version}"
    return sys.executable


@dataclass(frozen=True)
class VenvInstaller:
    """Builds the environment with ``interpreter -m venv``; ``system_site`` lets a machine without a package
    index reuse its preinstalled third-party packages (pins still come first in the new environment)."""

    dist: Path
    wheel_args: Sequence[str] = ()
    system_site: bool = False
    interpreter: Callable[[Combination], str] = interpreter_of

    @property
    def rebuild(self) -> Rebuild:
        """How this installer builds environments, for the bisect lines (the matrix adds the no_deps pins)."""
        return Rebuild(self.system_site, tuple(self.wheel_args))

    def steps(self, combo: Combination, env: Path) -> list[tuple[str, list[str]]]:
        """(what, argv) of each step that builds ``combo``'s environment in ``env``."""
        python = str(env_python(env))
        pip = [sys.executable, "-m", "pip", "--python", python, "install", "--quiet"]
        with_deps = [r for r in combo.requires if r not in combo.no_deps]
        dists = [Requirement(r).name for r in combo.requires]
        return [
            ("creating the environment", [self.interpreter(combo), "-m", "venv", "--without-pip",
                                          *(["--system-site-packages"] if self.system_site else []), str(env)]),
            ("installing the fresh wheels", [sys.executable, "-m", "wheels.install", "--dist", str(self.dist),
                                             "--python", python, *self.wheel_args]),
            *([("installing the pins", [*pip, *with_deps])] if with_deps else []),
            *([("installing the pins without their requirements", [*pip, "--no-deps", *combo.no_deps])]
              if combo.no_deps else []),
            ("importing the toolchain", [python, "-P", "-c", PROBE,
                                         json.dumps({"imports": list(combo.imports), "dists": dists})]),
        ]

    def __call__(self, combo: Combination, env: Path, log: Path) -> dict[str, str] | str:
        try:
            steps = self.steps(combo, env)
        except InvalidRequirement as exc:
            return f"toolchain unavailable: {exc}"
        with log.open("w", encoding="utf-8") as out:
            for what, argv in steps:
                out.write(f"$ {' '.join(argv)}\n")
                out.flush()
                try:
                    done = subprocess.run(argv, stdout=subprocess.PIPE if what.startswith("importing") else out,
                                          stderr=out, text=True, check=False)
                except OSError as exc:
                    return f"toolchain unavailable: {what}: cannot start {argv[0]!r}: {exc.strerror}"
                if done.returncode:
                    out.flush()
                    return f"toolchain unavailable: {what} failed (exit {done.returncode}): {_last_line(log)}"
        found: dict[str, str] = json.loads(done.stdout)
        wrong = [f"{r} wanted, {found[Requirement(r).name]} installed" for r in combo.requires
                 if not Requirement(r).specifier.contains(found[Requirement(r).name], prereleases=True)]
        return f"toolchain unavailable: {'; '.join(wrong)}" if wrong else found
