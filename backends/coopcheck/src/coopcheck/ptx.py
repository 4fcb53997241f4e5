"""Reading PTX text: the kernel entries a module defines, for any backend whose compiler emits PTX.

The entry's name is what a backend reports as its kernel name (it carries ``kernel_symbol(spec)``,
mangled or not), so sanitizer records and inspectors can name the specialization.
"""

from __future__ import annotations

import re

#: A kernel entry's header; a name ends at its parameter list or a blank (device functions are ``.func``).
_ENTRY = re.compile(r"^\.visible \.entry ([^\s(]+)\(", re.M)


class PtxError(ValueError):
    """PTX that does not hold what a backend expects of it (the message says what was found)."""


def entry_names(ptx: str) -> list[str]:
    """The names of every kernel entry in ``ptx``, in order."""
    return _ENTRY.findall(ptx)


def entry_name(ptx: str) -> str:
    """The name of the one kernel entry in ``ptx`` (a backend compiles one kernel per module).

    >>> entry_name(".visible .entry coop_block_load__int32__ipt4__striped(\\n.param .u64 p0\\n)\\n")
    'coop_block_load__int32__ipt4__striped'
    """
    names = entry_names(ptx)
    if len(names) != 1:
        raise PtxError(f"expected one .entry in the PTX, found {len(names)}: {names}")
    return names[0]
