"""The capabilities' passes run at once: each is one cargo (one rustc, one codegen unit) and one ptxas, so on
a machine of several cores the passes one after the other took the sum of their times."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from coopcheck_rustfatbin import build
from coopcheck_rustfatbin.build import PassResult, parse_capabilities


def test_the_passes_overlap_and_come_back_in_the_order_asked(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    capabilities = parse_capabilities("8.0;9.0+PTX")
    # Each pass waits until every pass has started: run one after the other, the first never returns.
    all_started = threading.Barrier(len(capabilities), timeout=10)

    def fake_pass(crate, target_dir, capability, toolchain):
        all_started.wait()
        return PassResult(capability, target_dir / "k.ptx", target_dir / "k.cubin", ("k",), "9.0", 1.0, 0.5, False)

    monkeypatch.setattr(build, "_pass", fake_pass)
    lines: list[str] = []
    passes = build._passes(tmp_path, tmp_path, capabilities, toolchain=None, log=lines.append)  # type: ignore[arg-type]
    assert [p.capability for p in passes] == capabilities
    assert [p.cubin.parent.name for p in passes] == ["sm_80", "sm_90"]
    assert sum("1 kernels, cargo 1.0 s, ptxas 0.5 s" in line for line in lines) == 2
