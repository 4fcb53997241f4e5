"""The host's view of the crate (coopcheck_rustfatbin.abi) against the crate's source and coop's ABI."""

from __future__ import annotations

import re
from pathlib import Path

import coopcheck
import numpy as np
import pytest
from coopcheck import KernelSpec, kernel_symbol
from coopcheck_rustfatbin import abi

KERNELS_RS = Path(__file__).resolve().parents[2] / "kernels" / "src" / "kernels.rs"
RUST_TYPES = {"i32": "int32", "i64": "int64"}


def _rust_params(function: str) -> list[abi.Param]:
    """Parameters of the exported ``fn load``/``fn store`` in kernels.rs, as abi.Param."""
    text = KERNELS_RS.read_text()
    found = re.search(rf'extern "ptx-kernel" fn {function}\((.*?)\)', text, re.DOTALL)
    assert found, f"{KERNELS_RS}: no exported fn {function}"
    params = []
    for name, pointer, rust in re.findall(r"(\w+): (\*(?:const|mut) )?(\$?\w+)", found[1]):
        params.append(abi.Param(name, None if rust == "$t" else RUST_TYPES[rust], pointer=bool(pointer)))
    return params


def _export_list(name: str) -> list[str]:
    """Words of one list in the crate's ``export!`` invocation (``dtypes {...}``, ``ipts [...]``...)."""
    invocation = KERNELS_RS.read_text().split("\nexport! {", 1)[1]
    body = re.search(rf"{name}\s*[\[{{](.*?)[\]}}]", invocation, re.DOTALL)
    assert body, f"{KERNELS_RS}: export! has no {name} list"
    return re.findall(r"(\w+)(?::|\s|,|$)", body[1])


@pytest.mark.parametrize("operation", coopcheck.OPERATIONS)
def test_param_table_matches_the_crate(operation):
    function = operation.split(".")[1]
    assert list(abi.PARAMS[operation]) == _rust_params(function)


@pytest.mark.parametrize("operation", coopcheck.OPERATIONS)
def test_every_pointer_param_but_load_dst_comes_from_the_batch(operation):
    batch = coopcheck.LoadBatch if operation == "block.load" else coopcheck.StoreBatch
    fields = set(batch.__dataclass_fields__)
    names = [p.name for p in abi.PARAMS[operation] if not (operation == "block.load" and p.name == "dst")]
    assert set(names) <= fields, f"not in {batch.__name__}: {set(names) - fields}"


def test_the_crate_exports_every_dtype_ipt_and_algorithm_the_host_lists():
    dtypes = _export_list("dtypes")[0::2]  # "uint8: u8, ..." -> names
    assert dtypes == list(coopcheck.DTYPES)
    assert [int(n) for n in _export_list("ipts")] == list(abi.ITEMS_PER_THREAD)
    assert _export_list("algorithms")[0::2] == list(coopcheck.ALGORITHMS)


def test_exported_symbols_are_kernel_symbols_of_every_combination():
    symbols = abi.exported_symbols()
    assert len(symbols) == (len(coopcheck.OPERATIONS) * len(coopcheck.DTYPES) * len(abi.ITEMS_PER_THREAD)
                            * len(coopcheck.ALGORITHMS))
    assert kernel_symbol(KernelSpec("block.store", "float16", (8, 4, 2), 7, "warp_transpose")) in symbols
    assert "coop_block_load__int32__ipt4__striped" in symbols


@pytest.mark.parametrize(("dtype", "block", "ipt", "algorithm", "expected"), [
    ("float64", (1024,), 16, "transpose", 1024 * 16 * 8),
    ("uint8", (5, 3, 2), 3, "transpose", 30 * 3),
    ("float16", (32, 4), 7, "warp_transpose", 128 * 7 * 2),
    ("int32", (128,), 4, "vectorize", 0),
])
def test_dynamic_shared_bytes_is_the_transpose_scratch_tile(dtype, block, ipt, algorithm, expected):
    assert abi.dynamic_shared_bytes(KernelSpec("block.load", dtype, block, ipt, algorithm)) == expected


@pytest.mark.parametrize("dtype", coopcheck.DTYPES)
def test_item_bytes_are_numpy_item_sizes(dtype):
    assert abi.ITEM_BYTES[dtype] == np.dtype(dtype).itemsize
