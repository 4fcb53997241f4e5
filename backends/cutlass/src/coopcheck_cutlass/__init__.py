"""coop block Load/Store for the CuTe Python DSL, and the ``cutlass`` backend of the coop harness.

Device code lives in :mod:`coopcheck_cutlass.block` (it imports cutlass); this package and
:mod:`coopcheck_cutlass.adapter` import no cutlass module, so registering the backend stays host-only.
"""

__version__ = "0.1.0"

#: Top-level modules the device code imports -> the distributions that provide them.
REQUIRES = {"cutlass": "nvidia-cutlass-dsl[cu13]"}
