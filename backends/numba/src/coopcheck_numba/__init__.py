"""coopcheck_numba: block Load/Store, Exchange, Shuffle, Reduce and Scan, and Warp Reduce and Scan, for numba-cuda
kernels, and the ``numba`` backend of the harness.

``block_load`` / ``block_store`` / ``block_exchange`` / ``block_shuffle`` / ``block_reduce`` / ``block_scan`` /
``warp_reduce`` / ``warp_scan`` build device functions for use inside any ``@cuda.jit`` kernel; ``shared_bytes`` /
``exchange_shared_bytes`` / ``shuffle_shared_bytes`` / ``reduce_shared_bytes`` / ``scan_shared_bytes`` /
``warp_reduce_shared_bytes`` / ``warp_scan_shared_bytes`` say how much dynamic shared memory their launch needs.
They are imported on first use, so that importing this package (as the backend registry does) loads no numba.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from coopcheck_numba.blockio import block_load, block_store, shared_bytes
    from coopcheck_numba.exchange import block_exchange, exchange_shared_bytes
    from coopcheck_numba.reduce import block_reduce, reduce_shared_bytes
    from coopcheck_numba.scan import block_scan, scan_shared_bytes
    from coopcheck_numba.shuffle import block_shuffle, shuffle_shared_bytes
    from coopcheck_numba.warp_reduce import warp_reduce, warp_reduce_shared_bytes
    from coopcheck_numba.warp_scan import warp_scan, warp_scan_shared_bytes

__all__ = ["REQUIRES", "block_exchange", "block_load", "block_reduce", "block_scan", "block_shuffle", "block_store",
           "exchange_shared_bytes", "reduce_shared_bytes", "scan_shared_bytes", "shared_bytes", "shuffle_shared_bytes",
           "warp_reduce", "warp_reduce_shared_bytes", "warp_scan", "warp_scan_shared_bytes"]
__version__ = "0.1.0"

#: Top-level modules the device code imports -> the distributions that provide them.
REQUIRES = {"numba": "numba", "numba_cuda": "numba-cuda", "numpy": "numpy"}


def __getattr__(name: str) -> Any:
    if name in __all__[1:]:
        from coopcheck import require

        require("numba", REQUIRES)
        from coopcheck_numba import blockio, exchange, reduce, scan, shuffle, warp_reduce, warp_scan

        # the warp families first: their names hold the block families' too
        families = (warp_reduce, warp_scan, exchange, shuffle, reduce, scan)
        family = next((m for m in families if m.__name__.rsplit(".", 1)[1] in name), blockio)
        return getattr(family, name)
    raise AttributeError(f"module 'coopcheck_numba' has no attribute {name!r}")
