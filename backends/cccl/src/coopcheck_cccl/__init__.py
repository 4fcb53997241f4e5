"""coopcheck_cccl: the ``cccl`` backend of the harness, block Load/Store, Exchange, Reduce and Scan and Warp Reduce and
Scan through NVIDIA's cuda.coop (cuda-cccl 1.1.1).

Importing this package loads nothing heavy: numba and cuda.coop are imported when a kernel is built.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from coopcheck import KernelSpec

__version__ = "0.1.0"

#: The one cuda-cccl release whose wheel ships ``cuda.coop._experimental`` with numba-cuda (1.2 dropped it).
CUDA_CCCL = "1.1.1"
#: Top-level modules the backend imports -> the distributions that provide them (cuda.coop is checked apart:
#: ``cuda`` is a namespace that other distributions share).
REQUIRES = {"numba": "numba", "numba_cuda": "numba-cuda", "numpy": "numpy"}
#: The contract's algorithm names -> cuda.coop's (``make_load``/``make_store``'s names for CUB's BLOCK_LOAD_* and
#: BLOCK_STORE_*); a contract algorithm missing here is declared unsupported.
ALGORITHMS = {"direct": "direct", "striped": "striped", "vectorize": "vectorize", "transpose": "transpose",
              "warp_transpose": "warp_transpose"}
#: The contract's Block Exchange methods -> cuda.coop's ``BlockExchangeType`` members: 1.1.1 binds StripedToBlocked
#: only (its module docstring lists the other seven of CUB's BlockExchange as not yet supported).
EXCHANGE_METHODS = {"striped_to_blocked": "StripedToBlocked"}
#: The one warp scan cuda.coop 1.1.1 binds (``warp.make_exclusive_sum``: ``ExclusiveSum(input, output)``), as the Warp
#: Scan contract's statics: a spec with any other is declared unsupported.
WARP_SCAN_BOUND = {"op": "sum", "mode": "exclusive", "seed": "none", "aggregate": "off"}


def binds_warp_scan(spec: KernelSpec) -> bool:
    """Whether ``spec`` (a Warp Scan kernel) is the warp scan cuda.coop binds."""
    return all(spec.static(axis) == value for axis, value in WARP_SCAN_BOUND.items())
