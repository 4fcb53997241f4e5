"""The batched listing (:mod:`harness.inspect.batched`) is the per-cubin one, instruction for instruction, for a
whole batch in two nvdisasm runs; what raw bytes cannot say is left to the per-cubin run."""

from __future__ import annotations

import hashlib

import pytest

from harness.inspect import batched, inspect_artifacts
from harness.inspect import sass as sass_module
from harness.inspect.sass import Instruction, kernel_listing, parse_listing

#: Fixture sources of one code section each: branches, a call inside the section, shared and local memory.
ONE_SECTION = ("plain", "static_shared", "dynamic_shared", "local_array", "device_call")


def _listing(cubin: bytes, kernel: str) -> tuple[Instruction, ...]:
    return parse_listing(kernel_listing(cubin, hashlib.sha256(cubin).hexdigest(), kernel), kernel)


def test_the_batched_listing_is_the_per_cubin_one(build, monkeypatch: pytest.MonkeyPatch) -> None:
    built = {name: build(name) for name in ONE_SECTION}
    monkeypatch.setattr(sass_module, "_listings", {})
    assert batched.prefetch([(b.cubin, name) for name, b in built.items()]) == len(ONE_SECTION)
    got = {name: _listing(b.cubin, name) for name, b in built.items()}
    monkeypatch.setattr(sass_module, "_listings", {})
    want = {name: _listing(b.cubin, name) for name, b in built.items()}
    assert got == want
    targets = [i.assembly for listing in got.values() for i in listing if "`(" in i.assembly]
    assert any("`(.L_x_" in a for a in targets), "no branch target was rebuilt as a label"
    assert any(a.startswith("CALL") and "square_plus_seven" in a for a in targets), "no call named its callee"


def test_a_batch_costs_two_nvdisasm_runs_and_its_inspections_none(build, request: pytest.FixtureRequest) -> None:
    built = {name: build(name) for name in ONE_SECTION}  # compiled first: only the listings may count below
    runs = request.getfixturevalue("nvdisasm_runs")
    batched.prefetch([(b.cubin, name) for name, b in built.items()])
    assert len(runs) == 2
    for name, b in built.items():
        inspect_artifacts(b.artifacts(name))
    assert len(runs) == 2


def test_what_raw_bytes_cannot_say_is_left_to_the_per_cubin_run(build, monkeypatch: pytest.MonkeyPatch) -> None:
    mixed, linked = build("mixed_module"), build("separate_call")  # two code sections; a device-linked callee
    monkeypatch.setattr(sass_module, "_listings", {})
    assert batched.prefetch([(mixed.cubin, "mixed_plain"), (linked.cubin, "separate_call"),
                             (build("plain").cubin, "plain")]) == 0  # and one file alone gains nothing
    report = inspect_artifacts(linked.artifacts("separate_call"))
    assert report.find("CALL")


def test_a_failing_batch_leaves_each_kernel_to_its_own_run(build, monkeypatch: pytest.MonkeyPatch) -> None:
    built = {name: build(name) for name in ONE_SECTION}
    monkeypatch.setattr(sass_module, "_listings", {})

    def broken(blob: bytes, raw_arch: str, base: int) -> str:
        raise batched.InspectError("nvdisasm exited with 1")

    monkeypatch.setattr(batched, "_disassemble_raw", broken)
    assert batched.prefetch([(b.cubin, name) for name, b in built.items()]) == 0
    assert inspect_artifacts(built["plain"].artifacts("plain")).instructions
