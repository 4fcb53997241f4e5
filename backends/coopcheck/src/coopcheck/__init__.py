"""coop: the backend-neutral vocabulary of block cooperative primitives and the backend registry.

Dependency-free on purpose: importing ``coopcheck`` loads no CUDA, numba or cutlass module.
"""

from coopcheck.adapter import Adapter, Artifacts, CaseSupport, KernelSpec, LaunchNaming, kernel_symbol, launched_symbol
from coopcheck.availability import BackendUnavailable, require
from coopcheck.exchange import ExchangeBatch
from coopcheck.load_store import LoadBatch, StoreBatch
from coopcheck.reduce import ReduceBatch
from coopcheck.registry import UnknownBackend, active, available, register
from coopcheck.scan import ScanBatch
from coopcheck.shuffle import ShuffleBatch
from coopcheck.vocabulary import (
    ALGORITHMS,
    DTYPES,
    OPERATIONS,
    TRANSPOSE_FAMILY,
    InvalidParameter,
    block_threads,
    check_static,
)
from coopcheck.warp_reduce import WarpReduceBatch
from coopcheck.warp_scan import WarpScanBatch

__all__ = [
    "ALGORITHMS", "DTYPES", "OPERATIONS", "TRANSPOSE_FAMILY",
    "Adapter", "Artifacts", "BackendUnavailable", "CaseSupport", "ExchangeBatch", "InvalidParameter", "KernelSpec",
    "LaunchNaming", "LoadBatch", "ReduceBatch", "ScanBatch", "ShuffleBatch", "StoreBatch",
    "UnknownBackend", "WarpReduceBatch", "WarpScanBatch", "active", "available", "block_threads", "check_static",
    "kernel_symbol", "launched_symbol", "register", "require",
]
__version__ = "0.1.0"
