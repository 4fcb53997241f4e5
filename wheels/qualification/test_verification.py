"""The manifest guards installation: the dist folder verifies, and a tampered wheel is refused by name."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

from wheels.inventory import Inventory
from wheels.manifest import MANIFEST_NAME, WheelRecord, verify
from wheels.qualify import make_venv


def test_dist_verifies(inventory: Inventory) -> None:
    assert verify(inventory.dist) == inventory.manifest


def test_tampered_wheel_is_refused(record: WheelRecord, inventory: Inventory, tmp_path: Path) -> None:
    dist = tmp_path / "dist"
    dist.mkdir()
    for name in [MANIFEST_NAME, *(wheel.file for wheel in inventory.manifest.wheels)]:
        shutil.copy2(inventory.dist / name, dist / name)
    tampered = bytearray((dist / record.file).read_bytes())
    tampered[len(tampered) // 2] ^= 0xFF
    (dist / record.file).write_bytes(tampered)
    python = make_venv(tmp_path / "venv", inherit=False)

    command = [sys.executable, "-m", "wheels.install", "--dist", str(dist), "--python", str(python)]
    done = subprocess.run(command, cwd=inventory.repo_root, capture_output=True, text=True)

    assert done.returncode == 1, done.stdout + done.stderr
    assert f"{record.file}: sha256 is" in done.stderr and "refused" in done.stderr, done.stderr
    installed = sorted(path.name for path in (tmp_path / "venv").glob("lib/*/site-packages/*.dist-info"))
    assert installed == [], f"installed despite the refusal: {installed}"
