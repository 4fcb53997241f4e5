"""A contract's resource table checked against a :class:`KernelReport`: one message per broken rule.

Each ``[[resources]]`` entry applies to the algorithms it lists (``"*"`` for all) and states
figures and opcode patterns. ``shared_bytes`` (static + dynamic), ``barriers``, ``local_bytes``
and ``stack_bytes`` must equal the stated value; ``min_shared_bytes`` is a lower bound;
``forbid_sass`` / ``require_sass`` list opcode patterns that no / some instruction may match.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import Any

import coopcheck

from harness.errors import ContractError
from harness.inspect.report import KernelReport
from harness.inspect.sass import Instruction, check_pattern, matches

#: Rules stating a report attribute exactly -> opcodes that show where that figure comes from,
#: quoted when it breaks the rule.
_EXACT: dict[str, tuple[str, ...]] = {
    "shared_bytes": ("STS", "LDS", "ATOMS"),
    "barriers": ("BAR",),
    "local_bytes": ("STL", "LDL"),
    "stack_bytes": ("CALL", "STL", "LDL"),
}
_PATTERN_KEYS = ("forbid_sass", "require_sass")
RULE_KEYS = ("algorithms", *_EXACT, "min_shared_bytes", *_PATTERN_KEYS)


def resource_violations(
    report: KernelReport, algorithm: str, rules: Sequence[Mapping[str, Any]],
    known: Collection[str] = coopcheck.ALGORITHMS,
) -> list[str]:
    """Messages for every rule ``report`` breaks among those that apply to ``algorithm``; empty = clean.

    A malformed table (unknown key, bad value, an algorithm not in ``known``: the family's) raises
    :class:`ContractError` naming the entry, whether or not the entry applies to ``algorithm``.
    """
    return [message for rule in _applying(algorithm, rules, known) for message in _violations(report, rule)]


def forbidden_hits(report: KernelReport, algorithm: str, rules: Sequence[Mapping[str, Any]],
                   known: Collection[str] = coopcheck.ALGORITHMS) -> dict[str, int]:
    """Each ``forbid_sass`` pattern applying to ``algorithm`` -> how many instructions match it: a report says
    which forbidden opcodes were looked for, not only that none broke a rule."""
    return {p: len(report.find(p)) for rule in _applying(algorithm, rules, known)
            for p in rule.get("forbid_sass", ())}


def _applying(algorithm: str, rules: Sequence[Mapping[str, Any]], known: Collection[str]) -> list[Mapping[str, Any]]:
    """The rules that apply to ``algorithm``, once every rule was checked."""
    for index, rule in enumerate(rules):
        _check_rule(index, rule, known)
    return [rule for rule in rules if "*" in rule["algorithms"] or algorithm in rule["algorithms"]]


def _violations(report: KernelReport, rule: Mapping[str, Any]) -> list[str]:
    where = f"[{report.kernel_name}]"
    found = []
    for key in _EXACT:
        if key in rule and getattr(report, key) != rule[key]:
            evidence = _evidence(report, key)
            found.append(f"{key}: {_describe(report, key)}, but the rule says {rule[key]}{evidence} {where}")
    if "min_shared_bytes" in rule and report.shared_bytes < rule["min_shared_bytes"]:
        found.append(
            f"min_shared_bytes: {_describe(report, 'shared_bytes')}, "
            f"but the rule says at least {rule['min_shared_bytes']} {where}"
        )
    for pattern in rule.get("forbid_sass", ()):
        hits = report.find(pattern)
        if hits:
            more = f" (+{len(hits) - 1} more)" if len(hits) > 1 else ""
            found.append(f"forbid_sass {pattern}: {hits[0].excerpt()}{more} {where}")
    for pattern in rule.get("require_sass", ()):
        if not report.find(pattern):
            count = len(report.instructions)
            found.append(f"require_sass {pattern}: none of {count} instructions matches {where}")
    return found


def _describe(report: KernelReport, key: str) -> str:
    if key == "shared_bytes":
        static, dynamic = report.shared_static_bytes, report.shared_dynamic_bytes
        return f"{static + dynamic} (static {static} + dynamic {dynamic})"
    return str(getattr(report, key))


def _evidence(report: KernelReport, key: str) -> str:
    first: Instruction | None = next(
        (i for i in report.instructions if any(matches(p, i.mnemonic) for p in _EXACT[key])), None
    )
    return f"; first {first.excerpt()}" if first else ""


def _check_rule(index: int, rule: Mapping[str, Any], known: Collection[str]) -> None:
    where = f"resources[{index}]"
    unknown = sorted(set(rule) - set(RULE_KEYS))
    if unknown:
        raise ContractError(f"{where}: unknown rule key {unknown[0]!r}; known keys: {', '.join(RULE_KEYS)}")
    algorithms = rule.get("algorithms")
    if not isinstance(algorithms, list) or not algorithms:
        raise ContractError(f"{where}.algorithms: a non-empty list of algorithms or '*' is required")
    for name in algorithms:
        if name != "*" and name not in known:
            raise ContractError(f"{where}.algorithms: {name!r} is not '*' or one of {', '.join(known)}")
    for key in (*_EXACT, "min_shared_bytes"):
        value = rule.get(key, 0)
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise ContractError(f"{where}.{key}: {value!r} is not a byte or barrier count (an int >= 0)")
    for key in _PATTERN_KEYS:
        patterns = rule.get(key, [])
        if not isinstance(patterns, list):
            raise ContractError(f"{where}.{key}: {patterns!r} is not a list of opcode patterns")
        for pattern in patterns:
            try:
                check_pattern(pattern)
            except ValueError as exc:
                raise ContractError(f"{where}.{key}: {exc}") from None
