"""The four compute-sanitizer tools: the flags each runs with, its planted positive control, its command line."""

from __future__ import annotations

from dataclasses import dataclass

#: compute-sanitizer's exit status when it found something (any other non-zero status is a crash).
ERROR_EXITCODE = 86
#: Seconds the sanitizer waits for a worker to connect (its multi-process default is 60).
LAUNCH_TIMEOUT = 120

TOOL_FLAGS: dict[str, tuple[str, ...]] = {
    # Hazard records carry the block index (the case) and the launch's host stack; analysis
    # records name only the two source lines of a race, which charges every case of the kernel.
    "racecheck": ("--racecheck-report", "hazard", "--racecheck-detect-level", "warn"),
    # cuda-python's cuGetProcAddress probing fails by design and is no kernel's fault; the padding
    # makes an overrun that starts right past an exact-size allocation land in no allocation.
    "memcheck": ("--report-api-errors", "no", "--padding", "32"),
    "initcheck": (),
    "synccheck": (),
}


@dataclass(frozen=True)
class Control:
    """A planted bug the tool must report, run as a pytest item of the same session as the cases."""

    id: str  # the pytest node id
    symbol: str  # the kernel's name, as the sanitizer's records show it
    plants: str

    @property
    def tool(self) -> str:
        return self.id.split("/")[1]


CONTROLS: dict[str, Control] = {c.tool: c for c in (
    Control("control/racecheck/shared-race", "coop_control_shared_race",
            "two warps write their shared-memory slots and read each other's with no barrier between"),
    Control("control/memcheck/oob-global-write", "coop_control_oob_write",
            "one thread more than an exact-size global array has elements writes its element"),
    Control("control/initcheck/uninit-global-read", "coop_control_uninit_read",
            "a kernel reads a global array that was allocated and never written"),
    Control("control/synccheck/bad-syncwarp-mask", "coop_control_bad_syncwarp_mask",
            "every lane of a warp calls __syncwarp with a mask holding only the lower 16 lanes"),
)}


def sanitizer_command(executable: str, tool: str, *, save: str, log: str,
                      error_exitcode: int = ERROR_EXITCODE,
                      launch_timeout: int = LAUNCH_TIMEOUT) -> list[str]:
    """The sanitizer and its flags for one worker run, up to (not including) the target command.

    >>> sanitizer_command("compute-sanitizer", "memcheck", save="m.xml", log="m.log")[-9:]
    ['--report-api-errors', 'no', '--padding', '32', '--xml', '--save', 'm.xml', '--log-file', 'm.log']
    """
    if tool not in TOOL_FLAGS:
        raise ValueError(f"unknown sanitizer tool {tool!r}; tools: {', '.join(TOOL_FLAGS)}")
    return [
        executable, "--tool", tool,
        # The default limit of 100 hides later kernels' findings from the log (the XML has them all).
        "--print-limit", "0",
        # Findings exit N; any other non-zero status is a crash of the sanitizer or of its worker.
        "--error-exitcode", str(error_exitcode),
        # Required when the target is a pytest-xdist worker; a worker exiting with an error is a failure.
        "--target-processes", "all", "--launch-timeout", str(launch_timeout), "--check-exit-code", "yes",
        # A worker that drew only host-side cases never initializes CUDA; a lane that ran nothing fails
        # on its own count instead.
        "--require-cuda-init", "no",
        # A planted or real bad access ends that kernel only: the worker's later cases still run.
        "--destroy-on-device-error", "kernel",
        *TOOL_FLAGS[tool],
        # Records go to the run's own files: the worker's stdout is the xdist channel.
        "--xml", "--save", save, "--log-file", log,
    ]
