"""A batched launch configures a grid of one block per case instance, far under the 128 blocks below which numba
warns of low occupancy: the launch keeps that warning out of a lane's output (it was one per kernel group) and
lets every other warning through."""

from __future__ import annotations

import warnings
from types import SimpleNamespace

import pytest
from coopcheck.grids import configured
from numba import cuda


def _kernel(x):  # type: ignore[no-untyped-def]
    pass


def _warnings_of(configure) -> list[str]:  # type: ignore[no-untyped-def]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        configure()
    return [str(w.message) for w in caught]


def test_numba_warns_of_a_small_grid_and_the_launch_does_not() -> None:
    dispatcher = cuda.jit(_kernel)
    assert any("under-utilization" in m for m in _warnings_of(lambda: dispatcher[4, (32,), 0, 0]))
    # another grid: numba keeps a configuration it made, and warns only when it makes one
    assert _warnings_of(lambda: configured(dispatcher, 5, (32,), 0)) == []


def test_the_warning_is_kept_out_when_numba_highlights_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """Where colorama is installed numba wraps its messages in terminal colour codes (a GPU machine's lanes printed
    the warning 6,777 times so), which the start of the message no longer matches."""
    from numba.cuda.core import errors

    bold = SimpleNamespace(errmsg=lambda text: f"\x1b[1m\x1b[1m{text}\x1b[0m\x1b[0m")
    monkeypatch.setattr(errors, "termcolor", lambda: bold)
    dispatcher = cuda.jit(_kernel)
    assert any(m.startswith("\x1b[1m") for m in _warnings_of(lambda: dispatcher[6, (32,), 0, 0]))
    assert _warnings_of(lambda: configured(dispatcher, 7, (32,), 0)) == []


def test_other_warnings_still_show() -> None:
    class Noisy:
        def __getitem__(self, config: object) -> object:
            warnings.warn("something else", RuntimeWarning, stacklevel=2)
            return config

    assert _warnings_of(lambda: configured(Noisy(), 4, (32,), 0)) == ["something else"]
