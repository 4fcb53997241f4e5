"""Reading the project's data files (text, TOML, JSON) with one error shape: ``<path>: <what went wrong>``."""

from __future__ import annotations

import gzip
import json
import tomllib
from pathlib import Path
from typing import Any

from harness.errors import HarnessError


def decoded(data: bytes, where: str, error: type[HarnessError]) -> str:
    """``data`` as UTF-8 text; otherwise an ``error`` naming ``where`` and the first byte that is not."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise error(f"{where}: not UTF-8 text (byte 0x{data[exc.start]:02x} at offset {exc.start})") from None


def read_text(path: Path, error: type[HarnessError], shown: str | None = None) -> str:
    """The UTF-8 text of ``path`` (named ``shown`` in messages), decompressed when it is named ``*.gz``; an
    unreadable, undecompressable or undecodable file is ``error``."""
    where = shown or str(path)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise error(f"{where}: cannot read: {exc.strerror}") from None
    if path.suffix == ".gz":
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError) as exc:
            raise error(f"{where}: not a readable gzip file: {exc}") from None
    return decoded(data, where, error)


def read_toml(path: Path, error: type[HarnessError], shown: str | None = None) -> dict[str, Any]:
    text = read_text(path, error, shown)
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise error(f"{shown or path}: not valid TOML: {exc}") from None


def read_json(path: Path, error: type[HarnessError], shown: str | None = None) -> Any:
    text = read_text(path, error, shown)
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise error(f"{shown or path}: not valid JSON: {exc}") from None
