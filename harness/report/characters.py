"""Characters a report cannot carry, and the one function every report format shows them through.

XML 1.0 refuses most C0 control characters, UTF-8 cannot encode a lone surrogate, and a terminal or browser
obeys control characters instead of showing them. So each of them (C0 and C1 controls but tab and line
breaks, lone surrogates, U+FFFE and U+FFFF) is shown as its escape, ``\\x1b`` or ``\\udcff``, and counted:
every report says how many it replaced.
"""

from __future__ import annotations

import re
from typing import Any

_UNCARRIED = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff\ufffe\uffff]")


def note(replaced: int) -> str:
    """What a report says when it replaced ``replaced`` characters."""
    return (f"{replaced} character(s) that a report cannot carry (control characters, lone surrogates) are shown "
            "as their escapes, like \\x1b")


def carried(text: str) -> tuple[str, int]:
    r"""``text`` with every character a report cannot carry escaped, and how many there were.

    >>> carried("\x1b[1mbold")
    ('\\x1b[1mbold', 1)
    """
    return _UNCARRIED.subn(lambda m: ascii(m.group())[1:-1], text)


def carried_tree(value: Any) -> tuple[Any, int]:
    """A JSON-like ``value`` (dicts, lists, texts, numbers) with every text, keys too, :func:`carried`."""
    if isinstance(value, str):
        return carried(value)
    if isinstance(value, dict):
        out, replaced = {}, 0
        for key, item in value.items():
            (shown, n), (inner, m) = carried_tree(key), carried_tree(item)
            out[shown] = inner
            replaced += n + m
        return out, replaced
    if isinstance(value, list | tuple):
        items = [carried_tree(item) for item in value]
        return [item for item, _ in items], sum(n for _, n in items)
    return value, 0
