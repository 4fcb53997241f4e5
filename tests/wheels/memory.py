"""Wheels made in memory, as ``wheels.wheelfile`` reads them from disk, for tests of what reads them."""

from __future__ import annotations

from pathlib import Path, PurePosixPath

from wheels.wheelfile import Wheel


def tiny_plug_wheel(members: dict[str, bytes]) -> Wheel:
    """The tiny test distribution ``tiny-plug`` 2.0 holding ``members`` (path -> bytes)."""
    return Wheel(
        Path("tiny_plug-2.0-py3-none-any.whl"),
        "tiny-plug",  # type: ignore[arg-type]
        "2.0",
        {PurePosixPath(path): blob for path, blob in members.items()},
        PurePosixPath("tiny_plug-2.0.dist-info"),
    )
