"""Which GPUs a run spreads its workers over: listing, the --gpus selection, round-robin hand-out."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from harness.errors import HarnessError
from harness.gpus import gpu_ids, select_gpus, spread


def test_gpu_ids_come_from_cuda_visible_devices_when_set() -> None:
    assert gpu_ids({"CUDA_VISIBLE_DEVICES": "2, 5"}) == ["2", "5"]
    with pytest.raises(HarnessError, match="CUDA_VISIBLE_DEVICES is set but names no device"):
        gpu_ids({"CUDA_VISIBLE_DEVICES": ""})


def _nvidia_smi(tmp_path: Path, source: str) -> Path:
    path = tmp_path / "bin" / "nvidia-smi"
    path.parent.mkdir(exist_ok=True)
    path.write_text(f"#!{sys.executable}\n{source}")
    path.chmod(0o755)
    return path.parent


def test_gpu_ids_count_nvidia_smi_lines(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    listing = ("GPU 0: NVIDIA H200 (UUID: GPU-aaaa)\\n  MIG 1g.18gb Device 0: (UUID: MIG-bbbb)\\n"
               "GPU 1: NVIDIA H200 (UUID: GPU-cccc)\\n")
    monkeypatch.setenv("PATH", str(_nvidia_smi(tmp_path, f"import sys\nsys.stdout.write('{listing}')\n")))
    assert gpu_ids({}) == ["0", "1"]
    _nvidia_smi(tmp_path, "import sys\nsys.exit(9)\n")
    with pytest.raises(HarnessError, match=r"`nvidia-smi -L` lists no GPU \(exit status 9\)"):
        gpu_ids({})


@pytest.mark.parametrize(("given", "chosen"), [
    ("all", ["3", "5", "7"]), ("2", ["3", "5"]), ("3", ["3", "5", "7"]), ("0,1", ["0", "1"]),
    ("4,", ["4"]), (" 6 , 2 ", ["6", "2"]), ("GPU-aaaa,MIG-bbbb", ["GPU-aaaa", "MIG-bbbb"]),
])
def test_gpus_selects_all_a_count_or_a_list(given: str, chosen: list[str]) -> None:
    assert select_gpus(given, {"CUDA_VISIBLE_DEVICES": "3,5,7"}) == chosen


@pytest.mark.parametrize(("given", "message"), [
    ("4", r"--gpus 4: only 3 GPU\(s\) listed \(3, 5, 7\)"),
    ("0", "--gpus 0: name at least one GPU"),
    (",", "--gpus ',': names no GPU"),
    ("1,1", "--gpus '1,1': GPU 1 named twice"),
])
def test_a_bad_gpus_value_says_how_to_fix(given: str, message: str) -> None:
    with pytest.raises(HarnessError, match=message):
        select_gpus(given, {"CUDA_VISIBLE_DEVICES": "3,5,7"})


def test_workers_go_round_robin_over_the_gpus() -> None:
    assert spread(["0", "1"], 5) == ["0", "1", "0", "1", "0"]
    assert spread(["4"], 2) == ["4", "4"]
