"""Command templates from data files and options: ``{name}`` placeholders filled from a fixed set of names."""

from __future__ import annotations

import string
from collections.abc import Mapping, Sequence

from harness.report.errors import ReportError


def _placeholders(template: Sequence[str]) -> set[str]:
    return {name for arg in template for _, name, _, _ in string.Formatter().parse(arg) if name is not None}


def check_template(template: Sequence[str], names: set[str], where: str) -> None:
    """Refuse a template that names a placeholder no run can fill (before anything runs)."""
    if not template:
        raise ReportError(f"{where}: the command is empty")
    unknown = _placeholders(template) - names
    if unknown:
        raise ReportError(f"{where}: unknown placeholder(s) {', '.join(f'{{{n}}}' for n in sorted(unknown))}; "
                          f"known: {', '.join(f'{{{n}}}' for n in sorted(names))}")


def fill(template: Sequence[str], values: Mapping[str, str]) -> list[str]:
    """One argument per template item (no shell): a value with spaces stays one argument."""
    return [arg.format_map(values) for arg in template]
