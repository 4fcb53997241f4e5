"""The GPU lanes under compute-sanitizer: per-worker sanitizer runs, their XML records mapped to case ids.

``python -m harness.sanitizer lane --tool racecheck -- [pytest args]`` runs the contract cases
and the tool's planted positive control under ``compute-sanitizer`` and turns every record into a
SanitizerError verdict of the case it belongs to. Importing this package starts nothing.
"""

from harness.errors import HarnessError


class SanitizerLaneError(HarnessError):
    """A sanitizer lane that cannot run or cannot be read: no GPU, no sanitizer, bad XML, bad layout."""
