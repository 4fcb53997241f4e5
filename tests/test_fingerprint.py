"""The environment fingerprint: what each backend compiles with is recorded without activating the backend."""

from __future__ import annotations

from importlib.metadata import EntryPoint
from pathlib import Path

import pytest
from coopcheck import registry

from harness.fingerprint import fingerprint


class Reports:
    """An adapter class that says what it compiles with; constructing it would be an error here."""

    def __init__(self) -> None:
        raise AssertionError("the fingerprint activated a backend")

    @staticmethod
    def toolchain() -> dict[str, str]:
        return {"fake-compiler": "1.2.3", "bundled-headers": "3.5.0"}


class Silent(Reports):
    toolchain = None  # an adapter without the optional method


class Broken(Reports):
    @staticmethod
    def toolchain() -> dict[str, str]:
        raise OSError("version.h: no such file")


@pytest.fixture
def fakes(monkeypatch: pytest.MonkeyPatch) -> None:
    eps = {name: EntryPoint(name, f"{__name__}:{cls}", registry.GROUP)
           for name, cls in (("reports", "Reports"), ("silent", "Silent"), ("broken", "Broken"))}
    monkeypatch.setattr(registry, "_entry_points", lambda: eps)


@pytest.mark.usefixtures("fakes")
def test_each_backends_toolchain_is_recorded_by_name() -> None:
    env = fingerprint(["reports", "silent"])
    assert env["toolchains"] == {"reports": {"fake-compiler": "1.2.3", "bundled-headers": "3.5.0"}}


@pytest.mark.usefixtures("fakes")
def test_a_toolchain_that_cannot_be_read_is_recorded_as_such() -> None:
    assert fingerprint(["broken"])["toolchains"] == {"broken": {"error": "OSError: version.h: no such file"}}


@pytest.mark.usefixtures("fakes")
def test_no_toolchain_reported_records_no_field() -> None:
    assert "toolchains" not in fingerprint(["silent"])


def test_every_installed_distribution_of_the_project_is_recorded(monkeypatch: pytest.MonkeyPatch,
                                                                 tmp_path: Path) -> None:
    """A new backend's distribution is recorded without a list to extend; a look-alike name is not ours."""
    for name in ("coopcheck-example", "coopcheckers"):
        info = tmp_path / f"{name.replace('-', '_')}-0.1.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.1\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    packages = fingerprint()["packages"]
    assert packages["coopcheck-example"] == "0.1" and "coopcheckers" not in packages
    assert packages["coopcheck"] and packages["numpy"]
