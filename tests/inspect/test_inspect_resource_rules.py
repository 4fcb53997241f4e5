"""``resource_violations`` on real reports: every rule key can pass and can fail, and flags exactly
what it should; malformed tables are contract errors naming the entry."""

from __future__ import annotations

from typing import Any

import pytest

from harness.errors import ContractError
from harness.inspect import resource_violations

# The block Load/Store contract's table, as the contract files state it.
CONTRACT_TABLE: list[dict[str, Any]] = [
    {"algorithms": ["direct", "striped", "vectorize"], "shared_bytes": 0, "barriers": 0,
     "forbid_sass": ["BAR", "LDS", "STS"]},
    {"algorithms": ["*"], "local_bytes": 0, "stack_bytes": 0, "forbid_sass": ["CALL", "LDL", "STL"]},
    {"algorithms": ["transpose"], "min_shared_bytes": 1, "require_sass": ["BAR", "STS", "LDS"]},
    {"algorithms": ["warp_transpose"], "min_shared_bytes": 1, "require_sass": ["STS", "LDS"]},
]


def rule(**figures: Any) -> list[dict[str, Any]]:
    return [{"algorithms": ["*"], **figures}]


def test_plain_kernel_is_clean_for_every_algorithm_without_shared_memory(report_of) -> None:
    report = report_of("plain")
    for algorithm in ("direct", "striped", "vectorize"):
        assert resource_violations(report, algorithm, CONTRACT_TABLE) == []


def test_plain_kernel_fails_the_transpose_rules(report_of) -> None:
    report = report_of("plain")
    n = len(report.instructions)
    assert resource_violations(report, "transpose", CONTRACT_TABLE) == [
        "min_shared_bytes: 0 (static 0 + dynamic 0), but the rule says at least 1 [plain]",
        f"require_sass BAR: none of {n} instructions matches [plain]",
        f"require_sass STS: none of {n} instructions matches [plain]",
        f"require_sass LDS: none of {n} instructions matches [plain]",
    ]


def test_shared_kernel_passes_transpose_and_fails_direct(report_of) -> None:
    report = report_of("static_shared")
    assert resource_violations(report, "transpose", CONTRACT_TABLE) == []
    assert resource_violations(report, "warp_transpose", CONTRACT_TABLE) == []
    bar, sts, lds = (report.find(p)[0].excerpt() for p in ("BAR", "STS", "LDS"))
    assert bar.startswith("BAR.SYNC.DEFER_BLOCKING 0x0 at /*") and sts.startswith("STS [")
    assert resource_violations(report, "direct", CONTRACT_TABLE) == [
        f"shared_bytes: 1024 (static 1024 + dynamic 0), but the rule says 0; first {sts} [static_shared]",
        f"barriers: 1, but the rule says 0; first {bar} [static_shared]",
        f"forbid_sass BAR: {bar} [static_shared]",
        f"forbid_sass LDS: {lds} [static_shared]",
        f"forbid_sass STS: {sts} [static_shared]",
    ]


def test_shared_bytes_is_exact_and_counts_dynamic_shared(report_of) -> None:
    report = report_of("dynamic_shared", dynamic_shared_bytes=512)
    assert resource_violations(report, "direct", rule(shared_bytes=512)) == []
    assert resource_violations(report, "direct", rule(shared_bytes=1024)) == [
        "shared_bytes: 512 (static 0 + dynamic 512), but the rule says 1024; "
        f"first {report.find('STS')[0].excerpt()} [dynamic_shared]"
    ]


def test_min_shared_bytes_is_a_lower_bound(report_of) -> None:
    report = report_of("dynamic_shared", dynamic_shared_bytes=512)
    assert resource_violations(report, "transpose", rule(min_shared_bytes=512)) == []
    assert resource_violations(report, "transpose", rule(min_shared_bytes=513)) == [
        "min_shared_bytes: 512 (static 0 + dynamic 512), but the rule says at least 513 [dynamic_shared]"
    ]


def test_reserved_window_counts_for_no_rule(report_of) -> None:
    report = report_of("mixed_module", "mixed_plain")
    assert report.shared_reserved_bytes == 1024
    assert resource_violations(report, "direct", CONTRACT_TABLE) == []


def test_local_memory_breaks_local_stack_and_forbidden_opcodes(report_of) -> None:
    report = report_of("local_array")
    stl, ldl = report.find("STL"), report.find("LDL")
    first_stl = stl[0].excerpt()
    assert resource_violations(report, "striped", CONTRACT_TABLE) == [
        f"local_bytes: 256, but the rule says 0; first {first_stl} [local_array]",
        f"stack_bytes: 256, but the rule says 0; first {first_stl} [local_array]",
        f"forbid_sass LDL: {ldl[0].excerpt()}" + (f" (+{len(ldl) - 1} more)" if len(ldl) > 1 else "")
        + " [local_array]",
        f"forbid_sass STL: {first_stl} (+{len(stl) - 1} more) [local_array]",
    ]
    assert resource_violations(report, "striped", rule(local_bytes=256, stack_bytes=256)) == []


def test_out_of_line_call_is_caught_by_its_opcode_alone(report_of) -> None:
    report = report_of("device_call")
    (call,) = report.find("CALL")
    assert (report.local_bytes, report.stack_bytes) == (0, 0)
    assert resource_violations(report, "vectorize", CONTRACT_TABLE) == [
        f"forbid_sass CALL: {call.excerpt()} [device_call]"
    ]
    assert call.excerpt().startswith("CALL.REL.NOINC `($device_call$")


def test_barriers_is_exact(report_of) -> None:
    report = report_of("static_shared")
    assert resource_violations(report, "transpose", rule(barriers=1)) == []
    assert resource_violations(report, "transpose", rule(barriers=2))[0].startswith(
        "barriers: 1, but the rule says 2; first BAR.SYNC.DEFER_BLOCKING 0x0 at /*"
    )


def test_require_sass_with_modifiers(report_of) -> None:
    report = report_of("static_shared")
    assert resource_violations(report, "transpose", rule(require_sass=["BAR.SYNC"])) == []
    assert resource_violations(report, "transpose", rule(require_sass=["BAR.ARV"])) == [
        f"require_sass BAR.ARV: none of {len(report.instructions)} instructions matches [static_shared]"
    ]


def test_rules_apply_only_to_their_algorithms(report_of) -> None:
    report = report_of("static_shared")
    table = [{"algorithms": ["striped", "transpose"], "barriers": 0}]
    assert resource_violations(report, "direct", table) == []
    assert len(resource_violations(report, "striped", table)) == 1
    assert len(resource_violations(report, "direct", [{"algorithms": ["*"], "barriers": 0}])) == 1


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ({"algorithms": ["*"], "shard_bytes": 0}, r"\[1\]: unknown rule key 'shard_bytes'; known keys: "),
        ({"shared_bytes": 0}, r"\[1\]\.algorithms: a non-empty list"),
        ({"algorithms": []}, r"\[1\]\.algorithms: a non-empty list"),
        ({"algorithms": "direct"}, r"\[1\]\.algorithms: a non-empty list"),
        ({"algorithms": ["transpsoe"]}, r"\[1\]\.algorithms: 'transpsoe' is not '\*' or one of direct"),
        ({"algorithms": ["transpose"], "barriers": -1}, r"\[1\]\.barriers: -1 is not a byte or"),
        ({"algorithms": ["*"], "local_bytes": True}, r"\[1\]\.local_bytes: True is not"),
        ({"algorithms": ["*"], "min_shared_bytes": "1"}, r"\[1\]\.min_shared_bytes: '1' is not"),
        ({"algorithms": ["*"], "forbid_sass": "BAR"}, r"\[1\]\.forbid_sass: 'BAR' is not a list"),
        ({"algorithms": ["transpose"], "require_sass": ["bar"]}, r"\[1\]\.require_sass: 'bar' is not an"),
    ],
)
def test_malformed_table_is_a_contract_error(report_of, entry: dict[str, Any], message: str) -> None:
    # Checked for every entry, also those that do not apply to the algorithm (here: transpose ones).
    table = [{"algorithms": ["direct"]}, entry]
    with pytest.raises(ContractError, match=r"^resources" + message):
        resource_violations(report_of("plain"), "direct", table)



def test_a_familys_algorithms_are_the_ones_its_table_may_name(report_of) -> None:
    """Another family's table names its own algorithms (Block Exchange: its methods), checked against those."""
    methods = ("striped_to_blocked", "blocked_to_striped")
    table = [{"algorithms": ["blocked_to_striped"], "barriers": 0}]
    assert resource_violations(report_of("static_shared"), "striped_to_blocked", table, methods) == []
    assert len(resource_violations(report_of("static_shared"), "blocked_to_striped", table, methods)) == 1
    with pytest.raises(ContractError, match=r"'transpose' is not '\*' or one of striped_to_blocked, blocked_to_"):
        resource_violations(report_of("plain"), "striped_to_blocked", [{"algorithms": ["transpose"]}], methods)
