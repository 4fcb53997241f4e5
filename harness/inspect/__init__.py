"""The artifact inspector: resource figures and final SASS of one kernel, and the contracts' resource rules.

Backends never inspect their own artifacts; they return :class:`coopcheck.Artifacts` and the harness
reads the cubin (for a fatbin, the entry the base package extracted) with pyelftools and nvdisasm::

    report = inspect_artifacts(artifacts)
    resource_violations(report, spec.algorithm, contract.resources)  # [] when clean
    launch_violations(report, spec.threads)  # [] when its block can launch at all
"""

from harness.inspect.errors import InspectError
from harness.inspect.limits import launch_violations
from harness.inspect.report import KernelReport, inspect_artifacts
from harness.inspect.rules import RULE_KEYS, forbidden_hits, resource_violations
from harness.inspect.sass import Instruction

__all__ = [
    "RULE_KEYS", "InspectError", "Instruction", "KernelReport", "forbidden_hits", "inspect_artifacts",
    "launch_violations", "resource_violations",
]
