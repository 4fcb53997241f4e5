"""The inspection of one compiled kernel: its resource figures and final SASS, from ``coopcheck.Artifacts``."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field

import coopcheck

from harness.inspect.cubin import digest, read_resources
from harness.inspect.errors import InspectError
from harness.inspect.sass import Instruction, check_pattern, kernel_listing, matches, parse_listing

_ARCH = re.compile(r"sm_(\d+)[a-z]?")


@dataclass(frozen=True)
class KernelReport:
    """What the final cubin says about one kernel. Byte figures are per block (shared) or per thread.

    ``shared_static_bytes`` is the kernel's own static shared memory; ``shared_reserved_bytes`` the
    system window ptxas puts ahead of it (see :mod:`harness.inspect.cubin`), which no rule counts.
    """

    kernel_name: str
    arch: str  # of the SASS in the cubin, "sm_90"
    sha256: str  # of the cubin, as the journal records it
    registers: int
    shared_static_bytes: int
    shared_dynamic_bytes: int  # requested at launch, from the artifacts
    shared_reserved_bytes: int
    local_bytes: int
    stack_bytes: int
    barriers: int
    sass: str = field(repr=False)
    instructions: tuple[Instruction, ...] = field(repr=False)
    opcodes: Counter[str] = field(repr=False, hash=False)  # mnemonic with modifiers -> count

    @property
    def shared_bytes(self) -> int:
        """Static plus dynamic shared memory: what the kernel itself asks for."""
        return self.shared_static_bytes + self.shared_dynamic_bytes

    @property
    def figures(self) -> dict[str, int]:
        """The figures the resource rules state, by rule key (what the host lane journals)."""
        return {"registers": self.registers, "shared_bytes": self.shared_bytes, "barriers": self.barriers,
                "local_bytes": self.local_bytes, "stack_bytes": self.stack_bytes}

    def find(self, pattern: str) -> list[Instruction]:
        """Instructions whose mnemonic matches the opcode ``pattern``, in program order."""
        check_pattern(pattern)
        return [i for i in self.instructions if matches(pattern, i.mnemonic)]


def inspect_artifacts(artifacts: coopcheck.Artifacts) -> KernelReport:
    """Inspect ``artifacts.kernel_name`` in ``artifacts.cubin`` (a fatbin's entry is extracted first)."""
    kernel = artifacts.kernel_name
    if artifacts.cubin is None:
        raise InspectError(f"kernel {kernel}: the artifacts carry no cubin, so there is no SASS to inspect")
    if artifacts.dynamic_shared_bytes < 0:
        raise InspectError(f"kernel {kernel}: dynamic_shared_bytes is {artifacts.dynamic_shared_bytes}")
    resources = read_resources(artifacts.cubin, kernel)
    wanted = _ARCH.fullmatch(artifacts.arch)
    if wanted is None or f"sm_{wanted[1]}" != resources.arch:
        raise InspectError(
            f"kernel {kernel}: artifacts are for {artifacts.arch!r}, the cubin holds {resources.arch}"
        )
    sha256 = digest(artifacts.cubin)
    sass = kernel_listing(artifacts.cubin, sha256, kernel)
    instructions = parse_listing(sass, kernel)
    return KernelReport(
        kernel_name=kernel,
        arch=resources.arch,
        sha256=sha256,
        registers=resources.registers,
        shared_static_bytes=resources.shared_static_bytes,
        shared_dynamic_bytes=artifacts.dynamic_shared_bytes,
        shared_reserved_bytes=resources.shared_reserved_bytes,
        local_bytes=resources.local_bytes,
        stack_bytes=resources.stack_bytes,
        barriers=resources.barriers,
        sass=sass,
        instructions=instructions,
        opcodes=Counter(i.mnemonic for i in instructions),
    )
