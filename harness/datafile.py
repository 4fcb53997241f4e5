"""Reading the project's data files (TOML, JSON) with one error shape: ``<path>: <what went wrong>``."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path
from typing import Any

from harness.errors import HarnessError


def read_toml(path: Path, error: type[HarnessError]) -> dict[str, Any]:
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise error(f"{path}: cannot read: {exc.strerror}") from None
    except tomllib.TOMLDecodeError as exc:
        raise error(f"{path}: not valid TOML: {exc}") from None


def read_json(path: Path, error: type[HarnessError]) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise error(f"{path}: cannot read: {exc.strerror}") from None
    except json.JSONDecodeError as exc:
        raise error(f"{path}: not valid JSON: {exc}") from None
