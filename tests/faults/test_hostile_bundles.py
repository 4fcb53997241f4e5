"""Item 10: a hostile bundle costs no disk: a tar's own index bounds what is extracted (refused before any
byte is written), and neither a tar nor a folder bundle may hold links or anything but plain files."""

from __future__ import annotations

import io
import os
import tarfile
from pathlib import Path

import pytest

from harness.report.bundle import verify_bundle, write_bundle
from harness.statuses import Status
from tests.report.journals import case_id, write_journal


class Zeros(io.RawIOBase):
    """``size`` zero bytes, made as they are read (a bomb's payload never sits in memory)."""

    def __init__(self, size: int) -> None:
        self.left = size

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: bytearray | memoryview) -> int:  # type: ignore[override]
        n = min(len(buffer), self.left)
        buffer[:n] = bytes(n)
        self.left -= n
        return n


@pytest.fixture
def extracted(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The names of every tar member the verifier writes to disk."""
    names: list[str] = []
    real = tarfile.TarFile.extractall

    def spy(self: tarfile.TarFile, path: str = ".", members: object = None, **kwargs: object) -> None:
        names.extend(m.name for m in (members or self.getmembers()))  # type: ignore[attr-defined]
        real(self, path, members, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(tarfile.TarFile, "extractall", spy)
    return names


def _tar(path: Path, *members: tuple[tarfile.TarInfo, io.RawIOBase | None]) -> Path:
    with tarfile.open(path, "w:gz") as tar:
        for info, data in members:
            tar.addfile(info, io.BufferedReader(data) if data is not None else None)
    return path


def _member(name: str, size: int = 0, kind: bytes = tarfile.REGTYPE, link: str = "") -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.size, info.type, info.linkname = size, kind, link
    return info


def test_a_gzip_bomb_is_refused_before_a_byte_is_written(tmp_path: Path, extracted: list[str]) -> None:
    size = 256 << 20  # 256 MiB of zeros: about 260 kB of gzip
    bomb = _tar(tmp_path / "bomb.tar.gz", (_member("q/journals/1-gpu.jsonl", size), Zeros(size)))
    assert bomb.stat().st_size < 1 << 20
    problems = verify_bundle(bomb)
    assert problems == [f"{bomb}: its index says it expands to at least {size} bytes, more than this verifier extracts "
                        f"from an archive of {bomb.stat().st_size} bytes (at most 200 times its size, at least "
                        f"{64 << 20}): refused before extracting anything"]
    assert extracted == []


@pytest.mark.parametrize(("member", "what"), [
    (_member("q/report.md", kind=tarfile.LNKTYPE, link="q/report.json"), "a hard link"),
    (_member("q/report.md", kind=tarfile.SYMTYPE, link="/etc/hostname"), "a symbolic link"),
    (_member("q/fifo", kind=tarfile.FIFOTYPE), "not a plain file or folder"),
])
def test_a_tar_member_that_is_not_a_plain_file_is_refused_unextracted(member: tarfile.TarInfo, what: str,
                                                                       tmp_path: Path, extracted: list[str]) -> None:
    path = _tar(tmp_path / "links.tar.gz", (_member("q/report.json", 2), Zeros(2)), (member, None))
    assert verify_bundle(path) == [f"{path}: {member.name}: {what}: a bundle holds plain files only"]
    assert extracted == []


def test_a_tar_naming_a_file_twice_is_refused_unextracted(tmp_path: Path, extracted: list[str]) -> None:
    path = _tar(tmp_path / "twice.tar.gz", (_member("q/report.json", 2), Zeros(2)),
                (_member("q/report.json", 3), Zeros(3)))
    assert verify_bundle(path) == [f"{path}: q/report.json: in the archive twice: a bundle names each file once"]
    assert extracted == []


@pytest.fixture
def folder_bundle(tmp_path: Path) -> Path:
    journal = write_journal(tmp_path / "gpu.jsonl", "gpu", [(case_id("numba"), Status.PASS)])
    path = tmp_path / "bundle"
    write_bundle(path, [journal])
    return path


def test_a_folder_bundle_holding_a_link_to_a_file_is_refused(folder_bundle: Path, tmp_path: Path) -> None:
    """The link points at a copy of the very file it replaces: followed, it would verify."""
    outside = tmp_path / "outside.md"
    outside.write_bytes((folder_bundle / "report.md").read_bytes())
    (folder_bundle / "report.md").unlink()
    (folder_bundle / "report.md").symlink_to(outside)
    assert verify_bundle(folder_bundle) == ["report.md: a symbolic link: a bundle holds plain files only"]


def test_a_folder_bundle_holding_a_linked_folder_is_refused(folder_bundle: Path, tmp_path: Path) -> None:
    os.rename(folder_bundle / "journals", tmp_path / "journals-outside")
    (folder_bundle / "journals").symlink_to(tmp_path / "journals-outside")
    assert verify_bundle(folder_bundle) == ["journals: a symbolic link: a bundle holds plain files only"]
