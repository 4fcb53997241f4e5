"""Reading a kernel's entry name from PTX, as every backend whose compiler emits PTX reports it."""

from __future__ import annotations

import re

import pytest
from coopcheck.ptx import PtxError, entry_name, entry_names

PTX = """//
// Cuda compilation tools, release 13.0, V13.0.88
//
.version 9.0
.target sm_90
.address_size 64

.extern .func (.param .b32 func_retval0) vprintf(.param .b64 a, .param .b64 b);
.visible .func helper(
\t.param .u64 p0
)
{
\tret;
}
.visible .entry _ZN14coopcheck_cccl7kernels37coop_block_load__int32__ipt4__stripedB2v1E(
\t.param .u64 p0
)
{
\tret;
}
"""


def test_the_one_entry_is_named_and_device_functions_are_not() -> None:
    name = "_ZN14coopcheck_cccl7kernels37coop_block_load__int32__ipt4__stripedB2v1E"
    assert entry_names(PTX) == [name] and entry_name(PTX) == name


def test_an_entry_with_its_parameters_on_the_same_line() -> None:
    assert entry_names(".visible .entry coop_k(.param .u64 a, .param .u32 b)\n{\n}\n") == ["coop_k"]


@pytest.mark.parametrize(("ptx", "found"), [(".version 9.0\n", "found 0: []"),
                                            (PTX + ".visible .entry other(\n)\n", "found 2: ")])
def test_anything_but_exactly_one_entry_is_refused_by_count(ptx: str, found: str) -> None:
    with pytest.raises(PtxError, match=re.escape(f"expected one .entry in the PTX, {found}")):
        entry_name(ptx)
