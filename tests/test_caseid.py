"""The case id grammar: render and parse are inverse, and malformed ids are refused."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness import caseid
from harness.errors import CaseIdError

keys = st.from_regex(r"[a-z][a-z0-9_]{0,8}", fullmatch=True)
values = st.from_regex(r"[A-Za-z0-9_.+-]{1,10}", fullmatch=True)


@given(st.dictionaries(keys, values, min_size=1, max_size=6))
def test_render_parse_round_trip(params: dict[str, str]) -> None:
    text = caseid.render("block.load", "numba", list(params.items()))
    assert caseid.parse(text) == ("block.load", "numba", list(params.items()))


def test_design_example_parses() -> None:
    text = "block.load/numba/dtype=int32,block=16x8,ipt=4,alg=striped,valid=partial"
    contract, backend, params = caseid.parse(text)
    assert (contract, backend, dict(params)["block"]) == ("block.load", "numba", "16x8")


@pytest.mark.parametrize("bad", [
    "block.load/numba",                      # no params
    "block.load/numba/dtype",                # not key=value
    "block.load/numba/dtype=a b",            # bad character
    "Block.load/numba/dtype=int32",          # contract grammar
    "block.load/Numba/dtype=int32",          # backend grammar
    "block.load/numba/ipt=1,ipt=2",          # repeated key
    "block.load/numba/dtype=int32/extra",    # too many parts
])
def test_malformed_ids_are_refused(bad: str) -> None:
    with pytest.raises(CaseIdError):
        caseid.parse(bad)


def test_render_refuses_bad_values() -> None:
    with pytest.raises(CaseIdError, match="a value may hold only"):
        caseid.render("block.load", "numba", [("dtype", "in t")])


def _canonical_by_rendering(text: str) -> bool:
    """The grammar's definition: an id is canonical when rendering its split pieces gives it back."""
    pieces = text.split("/")
    if len(pieces) != 3:
        return False
    params = [part.partition("=") for part in pieces[2].split(",")]
    if any(not eq for _key, eq, _value in params):
        return False
    try:
        return caseid.render(pieces[0], pieces[1], [(k, v) for k, _eq, v in params]) == text
    except CaseIdError:
        return False


#: Strings near the grammar: pieces that are almost names, parameters and separators, so that most draws are
#: ids or miss one by a character (a repeated key, an empty value, a capital, a space, a missing part).
piece = st.sampled_from(["a", "ipt", "b_2", "X", "", "a b", "1"])
near_param = st.tuples(piece, st.sampled_from(["=", "", "=="]), piece).map("".join)
near_ids = st.tuples(st.sampled_from(["block.load", "block", "Block.x", "a.b.c"]),
                     st.sampled_from(["numba", "Numba", "n1", ""]),
                     st.lists(near_param, max_size=4).map(",".join),
                     st.sampled_from(["", "/x"])).map(lambda p: f"{p[0]}/{p[1]}/{p[2]}{p[3]}")


@given(near_ids)
def test_parse_accepts_exactly_the_ids_that_render_back(text: str) -> None:
    try:
        caseid.parse(text)
    except CaseIdError:
        accepted = False
    else:
        accepted = True
    assert accepted == _canonical_by_rendering(text)


@given(near_ids)
def test_head_is_parse_without_the_parameters(text: str) -> None:
    """Every id parse takes, head takes with the same contract and backend; what head takes but parse refuses
    repeats a key."""
    try:
        got = caseid.head(text)
    except CaseIdError:
        with pytest.raises(CaseIdError):
            caseid.parse(text)
        return
    try:
        assert got == caseid.parse(text)[:2]
    except CaseIdError as exc:
        assert "repeated" in str(exc)
