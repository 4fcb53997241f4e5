"""The inspector's one handled error: an artifact or tool problem, naming the kernel and what is wrong."""

from harness.errors import HarnessError


class InspectError(HarnessError):
    """A cubin that cannot be read as the kernel's final SASS, or a CUDA tool that is missing or failed."""
