"""Run one script under one compute-sanitizer tool and read its summary line.

The backends' runtime tests use it to show that a tool bites on their test-only broken kernels
(a transpose without its barrier must be reported, the real one must not).
"""

from __future__ import annotations

import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from harness.sanitizer.lane import find_sanitizer
from harness.sanitizer.tools import ERROR_EXITCODE, TOOL_FLAGS

#: "RACECHECK SUMMARY: 12 hazards displayed (12 errors, 0 warnings)", "ERROR SUMMARY: 1 error".
_SUMMARY = re.compile(r"(?:RACECHECK|ERROR) SUMMARY: (\d+) (?:hazard|error)s?(?: displayed)?")


@dataclass(frozen=True)
class Probe:
    returncode: int
    findings: int
    output: str

    @property
    def reported(self) -> bool:
        return self.returncode == ERROR_EXITCODE and self.findings > 0

    @property
    def clean(self) -> bool:
        return self.returncode == 0 and self.findings == 0


def run_under(tool: str, script: Path, *args: str, timeout: float = 600) -> Probe:
    """``compute-sanitizer --tool TOOL python SCRIPT ARGS``; a missing summary line is an error, shown."""
    command = [find_sanitizer(None), "--tool", tool, "--print-limit", "0", "--error-exitcode", str(ERROR_EXITCODE),
               *TOOL_FLAGS[tool], sys.executable, str(script), *args]
    done = subprocess.run(command, capture_output=True, text=True, timeout=timeout, check=False)
    output = done.stdout + done.stderr
    summary = _SUMMARY.search(output)
    if summary is None:
        raise AssertionError(f"no {tool} summary in the output of {script.name} {' '.join(args)}:\n{output[-4000:]}")
    return Probe(done.returncode, int(summary.group(1)), output)
