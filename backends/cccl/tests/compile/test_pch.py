"""NVRTC's automatic precompiled headers under cuda.coop's own compile: the same LTO-IR, the headers parsed once.

Each factory compiles a few lines of C++ after the same ``#include`` of CUB, and NVRTC spends most of its time
in those headers. With ``-pch`` it parses them once per process and header set; these tests hold that the
LTO-IR stays byte for byte what cuda.coop's unchanged compile gives, that the header set is precompiled once
and then used, and that without the option nothing is precompiled (so the counts can fail).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from coopcheck_cccl import pch
from cuda.bindings import nvrtc
from cuda.coop._experimental import _nvrtc

LOAD = """#include <cuda/std/cstdint>
#include <cub/block/block_load.cuh>
using algorithm_t = cub::BlockLoad<::cuda::std::int32_t, 128, {ipt}, ::cub::BLOCK_LOAD_DIRECT, 1, 1>;
using temp_storage_t = typename algorithm_t::TempStorage;
extern "C" __device__ void load_{ipt}(temp_storage_t *s, ::cuda::std::int32_t* p, ::cuda::std::int32_t (&i)[{ipt}]) {{
    algorithm_t(*s).Load(p, i);
}}
"""
STORE = LOAD.replace("block_load", "block_store").replace("BlockLoad", "BlockStore").replace(
    "BLOCK_LOAD_DIRECT", "BLOCK_STORE_DIRECT").replace(".Load(", ".Store(")


def _compile(cpp: str) -> bytes:
    """cuda.coop's compile as its factories call it (sm_90, relocatable LTO-IR), past its in-memory cache."""
    _nvrtc.compile_impl.cache_clear()
    return _nvrtc.compile(cpp=cpp, cc=90, rdc=True, code="lto")[1]  # type: ignore[no-any-return]


@pytest.fixture(scope="module")
def unchanged() -> dict[str, bytes]:
    """The LTO-IR of each source from cuda.coop's compile as published."""
    return {cpp: _compile(cpp) for cpp in (LOAD.format(ipt=1), LOAD.format(ipt=4), STORE.format(ipt=2))}


def test_precompiled_headers_give_the_same_ltoir_and_parse_each_header_set_once(
        tmp_path: Path, unchanged: dict[str, bytes]) -> None:
    with pch.precompiled_headers(_nvrtc, tmp_path, count=True) as stats:
        for cpp, ltoir in unchanged.items():
            assert _compile(cpp) == ltoir
    # block_load's headers are precompiled by the first load and used by the second; block_store's are new.
    assert stats is not None and (stats.created, stats.used) == (2, 1)
    assert _nvrtc.nvrtc is nvrtc  # the module's own binding is back


def test_without_the_option_nothing_is_precompiled(tmp_path: Path, unchanged: dict[str, bytes]) -> None:
    with pch.precompiled_headers(_nvrtc, tmp_path, options=(), count=True) as stats:
        assert _compile(LOAD.format(ipt=1)) == unchanged[LOAD.format(ipt=1)]
    assert stats is not None and (stats.created, stats.used) == (0, 0)


def test_the_environment_turns_it_off(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(pch.ENV, "0")
    with pch.precompiled_headers(_nvrtc, count=True) as stats:
        assert _nvrtc.nvrtc is nvrtc
    assert stats is None


def test_the_adapters_form_counts_nothing_and_still_precompiles(tmp_path: Path, unchanged: dict[str, bytes]) -> None:
    """Without ``count`` no program's status or log is read; the precompiled header is still made and kept."""
    cpp = LOAD.format(ipt=4)
    with pch.precompiled_headers(_nvrtc, tmp_path) as stats:
        assert _compile(cpp) == unchanged[cpp]
        assert stats is None and list(tmp_path.glob("*.pch"))
