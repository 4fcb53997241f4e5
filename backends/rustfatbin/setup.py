"""Wheel build hook: ``build_py`` also builds the kernel crate into the fatbin it ships.

The capabilities come from ``COOP_CUDA_ARCHS`` (default ``8.0;9.0``, ``+PTX`` adds an arch's PTX);
the tools are found as ``coopcheck_rustfatbin.toolchain`` says. Everything else is in pyproject.toml.
"""

import os
import sys
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = Path(__file__).resolve().parent


class BuildPyWithFatbin(build_py):
    def run(self) -> None:
        super().run()
        # The build module needs only the standard library, so it runs before any dependency exists.
        sys.path.insert(0, str(HERE / "src"))
        from coopcheck_rustfatbin import build

        out = Path(self.build_lib) / "coopcheck_rustfatbin" / "data"
        archs = build.parse_capabilities(os.environ.get(build.ARCHS_ENV, build.DEFAULT_ARCHS))
        build.build(HERE / "kernels", out, archs)


setup(cmdclass={"build_py": BuildPyWithFatbin})
