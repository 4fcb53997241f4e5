"""A kernel the host lane passes must be able to launch its block: its registers fit the block's register file.

The contract tables say nothing about registers, so a 1024-thread kernel of 65 registers a thread passed the host
lane and could not launch (seen in a rustfatbin Exchange build: 72 time-sliced kernels at 65-94 registers).
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from harness.inspect import launch_violations


@pytest.mark.parametrize(("registers", "threads", "broken"), [
    (64, 1024, False),  # 32 warps x 64 x 32 registers: the whole file, 65,536
    (65, 1024, True),  # a warp's share rounds up to 256s: 2,304 x 32 warps = 73,728
    (72, 896, False),  # 2,304 x 28 warps = 64,512
    (80, 896, True),  # 2,560 x 28 = 71,680
    (255, 256, False),  # 8,192 x 8 = 65,536
    (255, 288, True),  # nine warps
    (128, 100, False),  # a partial warp is allocated whole: 4 x 4,096
])
def test_a_block_must_fit_the_register_file(report_of, registers: int, threads: int, broken: bool) -> None:
    report = replace(report_of("plain"), registers=registers)
    messages = launch_violations(report, threads)
    assert bool(messages) is broken
    if broken:
        assert f"{registers} registers a thread" in messages[0] and f"{threads} threads" in messages[0]


def test_the_limits_hold_for_the_compiled_kernel_itself(report_of) -> None:
    report = report_of("plain")
    assert 0 < report.registers <= 64 and launch_violations(report, 1024) == []
