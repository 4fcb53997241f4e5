"""The figures ``inspect_artifacts`` reads from real cubins, cross-checked against cuobjdump and ptxas -v,
and the errors it raises for artifacts it cannot inspect."""

from __future__ import annotations

import dataclasses
import hashlib
import re
import subprocess
from collections.abc import Callable

import pytest
from coopcheck import Artifacts

from harness.inspect import InspectError, KernelReport, inspect_artifacts
from harness.inspect import cubin as cubin_module
from harness.inspect.tools import locate_tool

# kernel: (source file in kernels/, dynamic shared bytes requested at launch)
KERNELS = {
    "plain": ("plain", 0),
    "static_shared": ("static_shared", 0),
    "dynamic_shared": ("dynamic_shared", 512),
    "local_array": ("local_array", 0),
    "device_call": ("device_call", 0),
    "mixed_plain": ("mixed_module", 0),
    "mixed_dynamic": ("mixed_module", 256),
    "separate_call": ("separate_call", 0),
}
# kernel: (static, dynamic, reserved shared bytes, barriers, local bytes, stack bytes)
FIGURES = {
    "plain": (0, 0, 0, 0, 0, 0),
    "static_shared": (1024, 0, 1024, 1, 0, 0),
    "dynamic_shared": (0, 512, 1024, 1, 0, 0),
    "local_array": (0, 0, 0, 0, 256, 256),
    "device_call": (0, 0, 0, 0, 0, 0),
    "mixed_plain": (0, 0, 1024, 0, 0, 0),
    "mixed_dynamic": (0, 256, 1024, 1, 0, 0),
    "separate_call": (0, 0, 0, 0, 256, 392),
}
#: Built by one ptxas run, whose -v log then describes the final kernel (nvlink changes the others).
WHOLE_PROGRAM = [kernel for kernel in FIGURES if kernel != "separate_call"]


def _report(report_of: Callable[..., KernelReport], kernel: str) -> KernelReport:
    source, dynamic = KERNELS[kernel]
    return report_of(source, kernel, dynamic_shared_bytes=dynamic)


@pytest.mark.parametrize("kernel", FIGURES)
def test_figures(report_of, kernel: str) -> None:
    report = _report(report_of, kernel)
    got = (
        report.shared_static_bytes, report.shared_dynamic_bytes, report.shared_reserved_bytes,
        report.barriers, report.local_bytes, report.stack_bytes,
    )
    assert got == FIGURES[kernel]
    assert report.arch == "sm_90"
    assert report.shared_bytes == got[0] + got[1]


def _cuobjdump_usage(cubin: bytes, kernel: str, tmp_path) -> dict[str, int]:
    image = tmp_path / "image.cubin"
    image.write_bytes(cubin)
    cuobjdump = locate_tool("cuobjdump", "nvidia-cuda-cuobjdump")
    text = subprocess.run(
        [cuobjdump, "--dump-resource-usage", image], capture_output=True, text=True, check=True
    ).stdout
    line = re.search(rf"Function {re.escape(kernel)}:\n\s*(.*)", text)
    assert line, text
    return {key: int(value) for key, value in re.findall(r"(\w+):(\d+)", line[1])}


def _frame(log: str, function: str) -> int:
    """The stack frame ``ptxas -v`` printed for ``function``."""
    frame = re.search(rf"Function properties for {re.escape(function)}\n\s+(\d+) bytes stack frame", log)
    assert frame, log
    return int(frame[1])


def _ptxas_says(log: str, kernel: str) -> dict[str, int]:
    """Registers, barriers, smem and stack frame that ``ptxas -v`` printed for the entry ``kernel``."""
    used = re.search(
        rf"Compiling entry function '{re.escape(kernel)}'.*?"
        r"Used (\d+) registers, used (\d+) barriers(?:, (\d+) bytes smem)?",
        log, re.DOTALL,
    )
    assert used, log
    registers, barriers, smem = (int(value or 0) for value in used.groups())
    return {"registers": registers, "barriers": barriers, "smem": smem, "frame": _frame(log, kernel)}


@pytest.mark.parametrize("kernel", FIGURES)
def test_figures_agree_with_cuobjdump(report_of, build, kernel: str, tmp_path) -> None:
    report = _report(report_of, kernel)
    usage = _cuobjdump_usage(build(KERNELS[kernel][0]).cubin, kernel, tmp_path)
    # cuobjdump counts the whole shared section, the system's window included.
    assert (usage["REG"], usage["STACK"], usage["SHARED"]) == (
        report.registers, report.stack_bytes, report.shared_static_bytes + report.shared_reserved_bytes
    )


@pytest.mark.parametrize("kernel", WHOLE_PROGRAM)
def test_figures_agree_with_ptxas(report_of, build, kernel: str) -> None:
    report = _report(report_of, kernel)
    said = _ptxas_says(build(KERNELS[kernel][0]).ptxas_log, kernel)
    # ptxas -v counts only the kernel's own static shared memory, and calls the frame "stack frame".
    assert said == {
        "registers": report.registers, "barriers": report.barriers,
        "smem": report.shared_static_bytes, "frame": report.local_bytes,
    }


def test_stack_of_device_linked_code_adds_the_callee_frame(report_of, build) -> None:
    report = report_of("separate_call")
    log = build("separate_call").ptxas_log
    own, callee = _frame(log, "separate_call"), _frame(log, "_Z6lookupPKii")
    assert (report.local_bytes, report.stack_bytes) == (own, own + callee)
    # The callee keeps its own section: the kernel's listing shows the CALL, not the callee's code.
    assert report.find("CALL") and ".text._Z6lookupPKii" not in report.sass


def test_sha256_and_sass_belong_to_the_kernel(report_of, build) -> None:
    report = report_of("mixed_module", "mixed_plain")
    other = report_of("mixed_module", "mixed_dynamic")
    assert report.sha256 == other.sha256 == hashlib.sha256(build("mixed_module").cubin).hexdigest()
    assert ".text.mixed_plain" in report.sass and "mixed_dynamic" not in report.sass
    assert not report.find("BAR") and other.find("BAR")
    assert sum(report.opcodes.values()) == len(report.instructions) > 0


def test_an_image_of_many_kernels_is_hashed_once(build, monkeypatch: pytest.MonkeyPatch) -> None:
    """A fatbin's cubin holds thousands of kernels (rustfatbin's: 30 MB, 17 ms to hash): hashed per kernel it cost
    more than the kernels' inspection itself."""
    image = build("mixed_module").cubin
    hashed: list[int] = []
    real = hashlib.sha256

    def counting(data: bytes = b"") -> hashlib._Hash:
        hashed.append(len(data))
        return real(data)

    monkeypatch.setattr(hashlib, "sha256", counting)
    cubin_module.digest.cache_clear()
    reports = [inspect_artifacts(Artifacts(k, image, arch="sm_90")) for k in ("mixed_plain", "mixed_dynamic") * 2]
    assert hashed.count(len(image)) == 1
    assert {r.sha256 for r in reports} == {real(image).hexdigest()}


def test_local_callee_code_is_part_of_the_kernel_listing(report_of) -> None:
    report = report_of("device_call")
    assert [i.mnemonic.split(".")[0] for i in report.find("CALL")] == ["CALL"]
    assert report.find("RET"), "the out-of-line callee sits in the kernel's section and is listed with it"


def test_no_cubin(build) -> None:
    artifacts = dataclasses.replace(build("plain").artifacts("plain"), cubin=None)
    with pytest.raises(InspectError, match=r"kernel plain: the artifacts carry no cubin"):
        inspect_artifacts(artifacts)


def test_not_an_elf(build) -> None:
    artifacts = dataclasses.replace(build("plain").artifacts("plain"), cubin=b"\x50\xed\x55\xba" + bytes(60))
    with pytest.raises(InspectError, match=r"kernel plain: cubin is not a readable ELF image"):
        inspect_artifacts(artifacts)


def test_unknown_kernel_lists_the_kernels_there(build) -> None:
    with pytest.raises(InspectError, match=r"kernel nope: no such function .*: mixed_dynamic, mixed_plain"):
        inspect_artifacts(build("mixed_module").artifacts("nope"))


def test_arch_mismatch(build) -> None:
    artifacts = dataclasses.replace(build("plain").artifacts("plain"), arch="sm_80")
    with pytest.raises(InspectError, match=r"kernel plain: artifacts are for 'sm_80', the cubin holds sm_90"):
        inspect_artifacts(artifacts)


def test_arch_suffix_is_accepted(build) -> None:
    artifacts = dataclasses.replace(build("plain").artifacts("plain"), arch="sm_90a")
    assert inspect_artifacts(artifacts).arch == "sm_90"


def test_relocatable_object_is_refused(build) -> None:
    with pytest.raises(InspectError, match=r"kernel plain: cubin is ET_REL, not a linked image"):
        inspect_artifacts(build("plain", "-rdc=true").artifacts("plain"))


def test_negative_dynamic_shared(build) -> None:
    with pytest.raises(InspectError, match=r"kernel plain: dynamic_shared_bytes is -1"):
        inspect_artifacts(build("plain").artifacts("plain", dynamic_shared_bytes=-1))
