"""The one error class of the report commands: an input (journal set, bundle, baseline, matrix) unusable."""

from harness.errors import HarnessError


class ReportError(HarnessError):
    """A report input that cannot be used; the message names the file and what is wrong with it."""
