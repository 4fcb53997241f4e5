"""The crate built once per session for two capabilities, 8.0 and 9.0 with its PTX, into a temporary
folder. The cargo target dirs and ptxas outputs are the build's cache (``COOP_RUST_TARGET_DIR`` or
``kernels/target``): a cold build takes about a minute per capability on 2 cores, a warm one seconds."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from coopcheck_rustfatbin.build import FATBIN_NAME, build, parse_capabilities

ARCHS = "8.0;9.0+PTX"
#: The crate of this checkout (the tests may run against an installed package, which has none).
CRATE = Path(__file__).resolve().parents[2] / "kernels"


@dataclass(frozen=True)
class Built:
    crate: Path
    fatbin: Path
    manifest: dict[str, Any]

    @property
    def data(self) -> bytes:
        return self.fatbin.read_bytes()


@pytest.fixture(scope="session")
def built(tmp_path_factory: pytest.TempPathFactory) -> Built:
    out = tmp_path_factory.mktemp("fatbin")
    manifest = build(CRATE, out, parse_capabilities(ARCHS))
    assert json.loads((out / "coop_kernels.json").read_text()) == manifest
    return Built(CRATE, out / FATBIN_NAME, manifest)
