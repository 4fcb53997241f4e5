"""Option values shared by the command lines and the pytest plugin, checked where they are parsed, and the
parser class of the command lines: a usage error is one line naming the option, like every handled error."""

from __future__ import annotations

import argparse
import math
import re
from typing import Any, NoReturn

#: The shortest --group-timeout (and other per-step timeouts): a worker takes about a second to start.
MIN_SECONDS = 1.0
_ARCH = re.compile(r"sm_[0-9]{2,3}[af]?")


_ROLE = re.compile(r":[a-z]+:`~?([^`]+)`|``([^`]+)``")


def plain(text: str) -> str:
    """``text`` without the reST markup of a docstring (literals, cross-reference roles), for a terminal.

    >>> plain("``python -m harness run``: see :func:`harness.session.supervise`")
    'python -m harness run: see harness.session.supervise'
    """
    return _ROLE.sub(lambda found: found[1] or found[2], text)


class HelpFormatter(argparse.ArgumentDefaultsHelpFormatter):
    """One help style for every command: plain text (docstrings lose their markup), each default shown once."""

    def _format_text(self, text: str) -> str:
        return super()._format_text(plain(text))

    def _get_help_string(self, action: argparse.Action) -> str | None:
        if action.default in (None, False, []):  # no default worth a word (an unset option, a flag, a list)
            return plain(action.help or "")
        return plain(super()._get_help_string(action) or "")


class OneLineParser(argparse.ArgumentParser):
    """An argument parser whose usage errors are one line, exit status 2, in the format of every handled error
    (``error: argument --x: ... (see PROG --help)``), and whose help (its subcommands' too) is written by
    :class:`HelpFormatter`."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", HelpFormatter)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"error: {message} (see {self.prog} --help)\n")


def _whole(text: str, minimum: int | None) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if minimum is not None and value < minimum:
        raise argparse.ArgumentTypeError(f"{value} is less than {minimum}")
    return value


def positive_int(text: str) -> int:
    """An argparse type: a whole number of at least 1.

    >>> positive_int("3")
    3
    """
    return _whole(text, 1)


def count(text: str) -> int:
    """An argparse type: a whole number of at least 0."""
    return _whole(text, 0)


def whole_number(text: str) -> int:
    """An argparse type: any whole number, written in decimal (a seed)."""
    return _whole(text, None)


def _finite(text: str, unit: str) -> float:
    """``text`` as a finite number, or the argparse error naming what it should be (``unit``: seconds, GiB)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of {unit}") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"{text} is not a finite number of {unit}")
    return value


def seconds(text: str) -> float:
    """An argparse type: a finite number of seconds, at least ``MIN_SECONDS`` (nan and inf never fire).

    >>> seconds("2.5")
    2.5
    """
    value = _finite(text, "seconds")
    if value < MIN_SECONDS:
        raise argparse.ArgumentTypeError(f"{text} is less than {MIN_SECONDS:g} (seconds)")
    return value


def gibibytes(text: str) -> int:
    """An argparse type: a finite, non-negative number of GiB, as bytes (0: no limit).

    >>> gibibytes("1.5")
    1610612736
    """
    value = _finite(text, "GiB")
    if value < 0:
        raise argparse.ArgumentTypeError(f"{text} is less than 0 (GiB)")
    return round(value * 2**30)


def arch(text: str) -> str:
    """An argparse type: a GPU architecture as the backends take it (sm_90, sm_90a, sm_100f)."""
    if not _ARCH.fullmatch(text):
        raise argparse.ArgumentTypeError(f"{text!r} is not a GPU architecture like sm_90 (sm_<major><minor>[a|f])")
    return text
