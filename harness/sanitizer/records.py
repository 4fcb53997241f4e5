"""compute-sanitizer's XML records (``--xml --save``), read into one shape for every tool.

Elements are found by name, not by a fixed path, so a field that moves inside a record is still
read; a file that is not such XML is an error naming it.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from harness.sanitizer import SanitizerLaneError

ROOT = "ComputeSanitizerOutput"
Dim3 = tuple[int, int, int]


class SanitizerXmlError(SanitizerLaneError):
    """A sanitizer XML file that cannot be read as records (the message names the file)."""


@dataclass(frozen=True)
class Frame:
    func: str
    path: str = ""
    line: int | None = None

    def __str__(self) -> str:
        where = f"{self.path}:{self.line}" if self.path and self.line is not None else self.path
        return f"{self.func} ({where})" if where else self.func


@dataclass(frozen=True)
class SanitizerRecord:
    """One finding; ``device_frames`` are innermost first as the file lists them."""

    source: Path
    index: int  # 1-based position in ``source``
    kind: str
    level: str
    text: str
    device_frames: tuple[Frame, ...]
    host_frames: tuple[Frame, ...]
    block: Dim3 | None
    threads: tuple[Dim3, ...]
    raw: str  # the record element as it appears in the file

    @property
    def functions(self) -> tuple[str, ...]:
        """Device function names the record mentions (one of them should name a kernel)."""
        return tuple(dict.fromkeys(f.func for f in self.device_frames))

    @property
    def where(self) -> str:
        """``record 3 of xml/racecheck.w0.123.xml``."""
        return f"record {self.index} of {self.source}"

    def describe(self) -> str:
        """One line: what, where in device code, which block and thread."""
        parts = [" ".join(p for p in (self.level, self.kind) if p) or "record"]
        if self.text:
            parts.append(self.text)
        if self.device_frames:
            parts.append(f"at {self.device_frames[0]}")
        if self.block is not None:
            parts.append("block ({},{},{})".format(*self.block))
        if self.threads:
            parts.append("thread " + " / ".join("({},{},{})".format(*t) for t in self.threads))
        return " ".join(parts)


def parse_file(path: Path) -> list[SanitizerRecord]:
    """Every record of one ``--xml --save`` file.

    The file is ``<ComputeSanitizerOutput>`` with one ``<record>`` per finding: ``<kind>`` says what
    it is (``Precise``/``Imprecise`` memcheck errors, ``Initcheck``, ``Synccheck``, racecheck
    ``Hazard`` and ``Analysis``), ``<level>`` how bad (``Error``, ``Warning``). Frames are elements
    with a ``<func>`` child (``<where>``, ``<frame>``, a hazard's ``<thread0>``): under
    ``<hostStack>`` (or another ``host*`` element) host frames, elsewhere device code.
    Coordinates are ``<blockIdx>`` and ``<threadIdx>`` with ``<x>``/``<y>``/``<z>`` children (a
    hazard has two ``threadIdx``, one per thread).
    """
    try:
        root = ET.parse(path).getroot()
    except ET.ParseError as exc:
        raise SanitizerXmlError(f"{path}: not well-formed XML: {exc}") from None
    except OSError as exc:
        raise SanitizerXmlError(f"{path}: cannot read: {exc.strerror}") from None
    if root.tag != ROOT:
        raise SanitizerXmlError(f"{path}: root element is <{root.tag}>, not <{ROOT}>")
    return [_record(path, index, element) for index, element in enumerate(root.iter("record"), 1)]


def _record(path: Path, index: int, element: ET.Element) -> SanitizerRecord:
    where = f"{path}: record {index}"
    device: list[Frame] = []
    host: list[Frame] = []
    for frame, on_host in _frames(element, on_host=False):
        (host if on_host else device).append(_frame(frame, where))
    block = element.find(".//blockIdx")
    return SanitizerRecord(
        source=path,
        index=index,
        kind=_text(element.find("kind")),
        level=_text(element.find("level")),
        text=_text(element.find("what/text")) or _text(element.find(".//text")),
        device_frames=tuple(device),
        host_frames=tuple(host),
        block=None if block is None else _dim3(block, where),
        threads=tuple(_dim3(t, where) for t in element.iter("threadIdx")),
        raw=ET.tostring(element, encoding="unicode").strip(),
    )


def _frames(element: ET.Element, on_host: bool) -> Iterator[tuple[ET.Element, bool]]:
    """Elements with a ``<func>`` child, depth first, flagged when inside a ``host*`` element."""
    for child in element:
        inside = on_host or child.tag.startswith("host")
        if child.find("func") is not None:
            yield child, inside
        yield from _frames(child, inside)


def _frame(element: ET.Element, where: str) -> Frame:
    line = _text(element.find("line"))
    return Frame(_text(element.find("func")), _text(element.find("path")),
                 _int(line, f"{where}: <{element.tag}><line>") if line else None)


def _dim3(element: ET.Element, where: str) -> Dim3:
    """``<blockIdx><x>1</x><y>0</y><z>0</z></blockIdx>`` (missing components are 0)."""
    x, y, z = (_int(_text(element.find(axis)) or "0", f"{where}: <{element.tag}><{axis}>") for axis in "xyz")
    return x, y, z


def _int(text: str, where: str) -> int:
    try:
        return int(text, 0)
    except ValueError:
        raise SanitizerXmlError(f"{where}: {text!r} is not an integer") from None


def _text(element: ET.Element | None) -> str:
    return (element.text or "").strip() if element is not None else ""
