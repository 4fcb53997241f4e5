"""coop block Load/Store, Exchange, Shuffle, Reduce and Scan and Warp Reduce and Scan for the CuTe Python DSL, and
the ``cutlass`` backend of the coop harness.

Device code lives in :mod:`coopcheck_cutlass.block`, :mod:`coopcheck_cutlass.exchange`,
:mod:`coopcheck_cutlass.shuffle`, :mod:`coopcheck_cutlass.reduce`, :mod:`coopcheck_cutlass.scan`,
:mod:`coopcheck_cutlass.warp_reduce` and :mod:`coopcheck_cutlass.warp_scan` (they import cutlass); this package,
:mod:`coopcheck_cutlass.adapter` and the plans import no cutlass module, so registering the backend stays host-only.
"""

__version__ = "0.1.0"

#: Top-level modules the device code imports -> the distributions that provide them.
REQUIRES = {"cutlass": "nvidia-cutlass-dsl[cu13]"}
