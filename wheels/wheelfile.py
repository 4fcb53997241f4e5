"""Read a built wheel: its members, core metadata, entry points and the build backend that made it."""

from __future__ import annotations

import configparser
import hashlib
import zipfile
from dataclasses import dataclass
from email.message import Message
from email.parser import HeaderParser
from pathlib import Path, PurePosixPath

from packaging.utils import InvalidWheelFilename, NormalizedName, parse_wheel_filename

from wheels import WheelsError

#: Suffixes of the files whose bytes must equal their source: modules and stubs.
SOURCE_SUFFIXES = (".py", ".pyi")


def sha256(path: Path) -> str:
    """Hex sha256 of a file, read in chunks."""
    digest = hashlib.sha256()
    with path.open("rb") as stream:
        for chunk in iter(lambda: stream.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


@dataclass(frozen=True)
class Wheel:
    """A wheel file and what it says about itself."""

    path: Path
    name: NormalizedName
    version: str
    members: dict[PurePosixPath, bytes]
    dist_info: PurePosixPath

    @property
    def metadata(self) -> Message:
        return HeaderParser().parsestr(self.text(self.dist_info / "METADATA"))

    @property
    def generator(self) -> str:
        """The build backend that wrote the wheel, from WHEEL's ``Generator`` field."""
        return HeaderParser().parsestr(self.text(self.dist_info / "WHEEL")).get("Generator", "unknown")

    def entry_points(self, group: str) -> dict[str, str]:
        """``name -> object reference`` of one entry-point group (empty when the wheel declares none)."""
        path = self.dist_info / "entry_points.txt"
        if path not in self.members:
            return {}
        parser = configparser.ConfigParser(delimiters=("=",), interpolation=None)
        parser.optionxform = str  # type: ignore[assignment,method-assign]  # names are case-sensitive
        parser.read_string(self.text(path))
        return dict(parser[group]) if parser.has_section(group) else {}

    def text(self, member: PurePosixPath) -> str:
        if member not in self.members:
            raise WheelsError(f"{self.path.name}: has no {member}")
        return self.members[member].decode("utf-8")

    @property
    def payload(self) -> dict[PurePosixPath, bytes]:
        """Members installed into site-packages: all but the ``.dist-info`` and ``.data`` folders."""
        data = PurePosixPath(f"{self.dist_info.stem}.data")
        return {
            path: blob for path, blob in self.members.items() if path.parts[0] not in (self.dist_info.name, data.name)
        }

    @property
    def modules(self) -> list[str]:
        """Importable names of the payload's ``.py`` files (a package by its ``__init__``)."""
        names = []
        for path in sorted(self.payload):
            if path.suffix == ".py":
                parts = path.with_suffix("").parts
                names.append(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
        return names

    @property
    def packages(self) -> set[str]:
        """Top-level import packages in the payload: folders holding modules or stubs."""
        return {path.parts[0] for path in self.payload if len(path.parts) > 1 and path.suffix in SOURCE_SUFFIXES}


def read_wheel(path: Path) -> Wheel:
    """Open ``path`` and load its members; raises :class:`WheelsError` naming the file when it is no wheel."""
    try:
        name, version, _, _ = parse_wheel_filename(path.name)
    except InvalidWheelFilename as exc:
        raise WheelsError(f"{path.name}: {exc}") from exc
    try:
        with zipfile.ZipFile(path) as archive:
            members = {
                PurePosixPath(info.filename): archive.read(info) for info in archive.infolist() if not info.is_dir()
            }
    except (zipfile.BadZipFile, OSError) as exc:
        raise WheelsError(f"{path.name}: cannot read the wheel: {exc}") from exc
    dist_infos = {p.parts[0] for p in members if p.parts[0].endswith(".dist-info")}
    if len(dist_infos) != 1:
        raise WheelsError(f"{path.name}: expected one .dist-info folder, found {sorted(dist_infos)}")
    return Wheel(path, name, str(version), members, PurePosixPath(dist_infos.pop()))
