"""What every kernel must satisfy to launch its block at all, whatever its contract's resource table says.

A block's registers come from one SM's register file: 65,536 32-bit registers a block on every architecture the
harness compiles for (sm_80, sm_90, sm_100), allocated a warp at a time in units of 256 (a partial warp is allocated
whole), at most 255 a thread. A kernel past that fails every launch with CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES, so
the host lane reports it as a broken resource rule rather than pass it.
"""

from __future__ import annotations

from harness.inspect.report import KernelReport

REGISTERS_PER_BLOCK = 65_536
REGISTERS_PER_THREAD = 255
ALLOCATION_UNIT = 256  # registers, per warp
WARP = 32


def block_registers(registers: int, threads: int) -> int:
    """Registers a block of ``threads`` takes at ``registers`` a thread, as the hardware allocates them."""
    per_warp = -(-registers * WARP // ALLOCATION_UNIT) * ALLOCATION_UNIT
    return per_warp * -(-threads // WARP)


def launch_violations(report: KernelReport, threads: int) -> list[str]:
    """Messages for the launch limits ``report``'s kernel breaks at ``threads`` threads a block; empty: it fits."""
    where = f"[{report.kernel_name}]"
    if report.registers > REGISTERS_PER_THREAD:
        return [f"registers: {report.registers} registers a thread, more than the {REGISTERS_PER_THREAD} a thread "
                f"may have {where}"]
    needed = block_registers(report.registers, threads)
    if needed > REGISTERS_PER_BLOCK:
        return [f"registers: {report.registers} registers a thread take {needed:,} for a block of {threads} threads, "
                f"more than the {REGISTERS_PER_BLOCK:,} of the register file: every launch fails {where}"]
    return []
