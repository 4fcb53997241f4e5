"""Markers from the path (a test's folder says what it needs), so lanes select by marker, not by name."""

from __future__ import annotations

import pytest

#: folder name under backends/<name>/tests/ -> marker
FOLDER_MARKERS = {"compile": "compile", "runtime": "runtime"}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        parts = item.path.parts
        if "backends" in parts and "tests" in parts:
            folder = parts[parts.index("tests") + 1] if parts.index("tests") + 1 < len(parts) else ""
            if folder in FOLDER_MARKERS:
                item.add_marker(FOLDER_MARKERS[folder])
