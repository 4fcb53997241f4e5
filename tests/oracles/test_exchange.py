"""The Exchange oracle on hand-built launches: the arrangements, the rank patterns it draws, what it judges
(and what it leaves unspecified), and the diagnoses it names."""

from __future__ import annotations

from dataclasses import replace

import coopcheck
import numpy as np
import pytest

from harness.cases import point_cases
from harness.contracts import load_contracts
from harness.oracles import block_exchange as oracle

EXCHANGE = {c.id: c for c in load_contracts()}["block.exchange"]


def _spec(method: str, block: tuple[int, ...] = (2,), ipt: int = 2, output: str = "inplace",
          dtype: str = "int32") -> coopcheck.KernelSpec:
    return coopcheck.KernelSpec("block.exchange", dtype, block, ipt, method,
                                variant=(("slicing", "off"), ("output", output)))


def _launch(method: str, block: str, ipt: int, output: str = "inplace", dtype: str = "int32") -> oracle.Launch:
    point = (("dtype", dtype), ("block", block), ("ipt", ipt), ("alg", method), ("slicing", "on"),
             ("output", output))
    cases = point_cases(EXCHANGE, "numba", point)
    return oracle.build(cases[0].spec, cases, 7)


def test_the_arrangements_say_which_tile_index_each_slot_holds() -> None:
    spec = _spec("warp_striped_to_blocked", (64,), 2)
    warp = oracle.arrangement(spec, "warp-striped").reshape(64, 2)
    assert warp[0].tolist() == [0, 32] and warp[31].tolist() == [31, 63] and warp[32].tolist() == [64, 96]
    assert oracle.arrangement(spec, "striped").reshape(64, 2)[32].tolist() == [32, 96]
    small = _spec("warp_striped_to_blocked", (5, 3, 2), 3)  # one warp of 30 lanes: warp-striped is striped
    assert oracle.arrangement(small, "warp-striped").tolist() == oracle.arrangement(small, "striped").tolist()
    for name in ("blocked", "striped", "warp-striped"):
        assert sorted(oracle.arrangement(spec, name).tolist()) == list(range(spec.tile))


def test_the_worked_example_of_a_guarded_scatter() -> None:
    spec = _spec("scatter_to_striped_guarded")
    batch = coopcheck.ExchangeBatch(np.array([10, 11, 12, 13], np.int32), np.array([3, -1, 0, 2], np.int32),
                                    np.ones(4, np.int32), 4)
    out, defined = oracle.expected(spec, batch, oracle.params_of(spec))
    assert out[0][defined[0]].tolist() == [12, 13, 10] and defined[0].tolist() == [True, True, False, True]


@pytest.mark.parametrize("method", ["scatter_to_blocked", "scatter_to_striped_guarded", "scatter_to_striped_flagged"])
def test_permutation_patterns_are_permutations_drawn_from_the_case_alone(method: str) -> None:
    launch = _launch(method, "128", 3)
    ranks = np.asarray(launch.batch.ranks).reshape(-1, 384)
    kinds = [launch.cases[int(c)]["ranks"] for c in launch.case_of_block]
    for row, kind in zip(ranks, kinds, strict=True):
        if kind in ("identity", "reverse", "random"):
            assert sorted(row.tolist()) == list(range(384))
        if kind == "identity":
            assert row.tolist() == list(range(384))
    alone = oracle.build(launch.spec, [launch.cases[0]], 7)  # the same case in a launch of its own
    mine = np.flatnonzero(launch.case_of_block == 0)
    order = np.argsort(launch.pattern_of_block[mine])
    assert np.array_equal(ranks[mine[order]], np.asarray(alone.batch.ranks).reshape(-1, 384)[np.argsort(
        alone.pattern_of_block)])


@pytest.mark.parametrize("method", ["scatter_to_striped_guarded", "scatter_to_striped_flagged"])
def test_a_skipped_item_points_at_a_tile_index_another_item_goes_to(method: str) -> None:
    """So that an implementation writing a skipped item clobbers a judged slot, never an unjudged one only."""
    launch = _launch(method, "64", 4)
    tile = launch.spec.tile
    ranks = np.asarray(launch.batch.ranks).reshape(-1, tile).astype(np.int64)
    flags = np.asarray(launch.batch.flags).reshape(-1, tile)
    for b, c in enumerate(launch.case_of_block):
        kind = launch.cases[int(c)]["ranks"]
        skipped = ranks[b] < 0 if method.endswith("guarded") else flags[b] == 0
        if kind not in ("partial", "sparse"):
            assert not skipped.any()
            continue
        share = skipped.mean()
        assert (0.15 < share < 0.5) if kind == "partial" else share > 0.75
        received = set(ranks[b][~skipped].tolist())
        assert len(received) == (~skipped).sum()  # the scattered items go to distinct tile indices
        targets = (ranks[b][skipped] % tile).tolist()
        assert len(set(targets)) == len(targets)
        first = targets[:len(received)]
        assert set(first) <= received and (len(targets) <= len(received) or set(targets) >= received)
        if method.endswith("flagged"):
            assert set(flags[b][~skipped].tolist()) <= {1, 2, 3} and (ranks[b] >= 0).all()


def _correct(launch: oracle.Launch) -> np.ndarray:
    out, _ = oracle.expected(launch.spec, launch.batch, oracle.params_of(launch.spec))
    return np.ascontiguousarray(out).reshape(-1)


def test_what_the_contract_leaves_unspecified_is_not_judged() -> None:
    launch = _launch("scatter_to_striped_guarded", "64", 2)
    snap = oracle.snapshot(launch.batch)
    out = _correct(launch)
    _, defined = oracle.expected(launch.spec, snap, oracle.params_of(launch.spec))
    assert not defined.all()
    out.reshape(defined.shape)[~defined] ^= 1  # whatever the unreceived tile indices hold
    assert all(v.passed for v in oracle.judge(launch, snap, out))
    out.reshape(defined.shape)[defined.nonzero()[0][0], defined.nonzero()[1][0]] ^= 1
    failed = [v for v in oracle.judge(launch, snap, out) if not v.passed]
    assert len(failed) == 1 and failed[0].checks == ("items-exchanged",) and "(exchanged item)" in failed[0].detail


def test_a_separate_output_must_leave_the_input_items_as_they_were() -> None:
    launch = _launch("striped_to_blocked", "32", 3, output="separate")
    snap = oracle.snapshot(launch.batch)
    out = _correct(launch).reshape(launch.batch.n_blocks, -1)
    assert out.shape[1] == 2 * launch.spec.tile
    out[1, -1] += 1
    [verdict] = oracle.judge(launch, snap, out.reshape(-1))
    assert verdict.checks == ("input-kept",) and "(input item as it was)" in verdict.detail


def test_a_launch_that_changes_its_ranks_or_returns_another_abi_fails_by_rule() -> None:
    launch = _launch("scatter_to_blocked", "32", 2)
    snap = oracle.snapshot(launch.batch)
    launch.batch.ranks[:] = 0
    verdicts = oracle.judge(launch, snap, _correct(replace(launch, batch=snap)))
    assert {v.checks for v in verdicts} == {("inputs-unmodified",)} and "input(s) ranks" in verdicts[0].detail
    abi = oracle.judge(launch, snap, _correct(launch).astype(np.int64))
    assert {v.checks for v in abi} == {("output-abi",)} and "the ABI says int32[" in abi[0].detail


def test_items_left_where_they_were_are_diagnosed() -> None:
    launch = _launch("blocked_to_striped", "64", 3)
    snap = oracle.snapshot(launch.batch)
    [verdict] = oracle.judge(launch, snap, np.asarray(snap.items).copy())
    assert verdict.diagnoses == ("nothing-exchanged",) and "matches: items left where they were" in verdict.detail


def test_a_contract_without_the_family_axes_is_refused() -> None:
    assert oracle.axes_problem("block.exchange", {"dtype": [], "ranks": []}) == (
        "an Exchange contract has the axes slicing, output, ranks (it lacks slicing, output)")
    assert oracle.axes_problem("block.exchange", dict.fromkeys(oracle.AXES, ())) is None
