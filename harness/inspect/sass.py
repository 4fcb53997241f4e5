"""SASS of a cubin: one ``nvdisasm`` run per distinct cubin (kept on disk by :mod:`harness.inspect.listings`), split per
kernel, parsed into instructions.

An opcode pattern names a mnemonic with optional dot-suffixes: ``BAR`` matches
``BAR.SYNC.DEFER_BLOCKING`` but not ``BARX``; ``LDS`` does not match ``LDSM``.
"""

from __future__ import annotations

import re
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from harness.inspect import listings
from harness.inspect.errors import InspectError
from harness.inspect.tools import locate_tool

NVDISASM_PACKAGE = "nvidia-cuda-nvdisasm"
NVDISASM_TIMEOUT_S = 300

#: A mnemonic as nvdisasm prints it, and so a contract's opcode pattern: an upper-case head, then modifiers that may
#: hold lower-case letters (VIMNMX.U16x2, packed halves).
PATTERN = re.compile(r"[A-Z][A-Z0-9_]*(?:\.[A-Za-z0-9_]+)*")
_SECTION_HEADER = re.compile(r"^//-+ (\S+) +-+$", re.MULTILINE)
_OFFSET = re.compile(r"^\s*/\*([0-9a-f]+)\*/")
# An instruction line: offset, optional guard predicate (@P0, @!PT, @UP1), mnemonic, operands, ';'.
_INSTRUCTION = re.compile(
    r"^\s*/\*(?P<offset>[0-9a-f]+)\*/\s+"
    r"(?P<assembly>(?:@!?U?P(?:T|\d+)\s+)?(?P<mnemonic>" + PATTERN.pattern + r")(?=[\s;])[^;]*?)\s*;"
)

#: Listings of cubins seen in this process: sha256 -> section name -> listing.
_listings: dict[str, dict[str, str]] = {}


@dataclass(frozen=True)
class Instruction:
    """One SASS instruction: byte offset in its section, mnemonic with modifiers, the assembly text."""

    offset: int
    mnemonic: str  # "BAR.SYNC.DEFER_BLOCKING": no guard predicate, no operands
    assembly: str  # "@P0 BAR.SYNC.DEFER_BLOCKING 0x0": as nvdisasm prints it, without ';'

    def excerpt(self) -> str:
        """``BAR.SYNC.DEFER_BLOCKING 0x0 at /*0130*/``, the offset as nvdisasm prints it."""
        return f"{self.assembly} at /*{self.offset:04x}*/"


def check_pattern(pattern: object) -> None:
    """Raise ValueError unless ``pattern`` is a mnemonic (:data:`PATTERN`) with optional ``.SUFFIX`` parts."""
    if not isinstance(pattern, str) or not PATTERN.fullmatch(pattern):
        raise ValueError(f"{pattern!r} is not an opcode pattern (MNEMONIC or MNEMONIC.MODIFIER...)")


def matches(pattern: str, mnemonic: str) -> bool:
    """Whether ``mnemonic`` is ``pattern`` itself or ``pattern`` followed by dot-suffixes.

    >>> matches("BAR", "BAR.SYNC.DEFER_BLOCKING"), matches("BAR", "BARX"), matches("LDS", "LDSM")
    (True, False, False)
    """
    return mnemonic == pattern or mnemonic.startswith(pattern + ".")


def listed(sha256: str) -> bool:
    """Whether this process holds the listing of the cubin of ``sha256``."""
    return sha256 in _listings


def remember(sha256: str, sections: dict[str, str]) -> None:
    """Keep the listing of a cubin made elsewhere (:mod:`harness.inspect.batched`): section name -> listing."""
    _listings[sha256] = sections


def kernel_listing(cubin: bytes, sha256: str, kernel: str) -> str:
    """The nvdisasm listing of ``.text.<kernel>``, with the callees ptxas placed in that section.

    A callee compiled apart and device-linked keeps its own section and is not listed; the
    kernel's ``CALL`` to it is.
    """
    listing = _listings.get(sha256)
    if listing is None:
        nvdisasm = locate_tool("nvdisasm", NVDISASM_PACKAGE)
        text = listings.cached(sha256, nvdisasm, lambda: run_nvdisasm(cubin, [], f"kernel {kernel}"))
        listing = _listings[sha256] = split_sections(text)
    section = f".text.{kernel}"
    if section not in listing:
        raise InspectError(f"kernel {kernel}: nvdisasm printed no {section} section")
    return listing[section]


def split_sections(text: str) -> dict[str, str]:
    """Section name -> its part of a whole-image listing, cut at nvdisasm's ``//---- name ----`` headers."""
    headers = list(_SECTION_HEADER.finditer(text))
    ends = [h.start() for h in headers[1:]] + [len(text)]
    return {h.group(1): text[h.start() : end].rstrip() + "\n" for h, end in zip(headers, ends, strict=True)}


def parse_listing(listing: str, kernel: str) -> tuple[Instruction, ...]:
    """The instructions of a listing; a line with an offset that does not parse is an error, not a skip."""
    instructions = []
    for line in listing.splitlines():
        if not _OFFSET.match(line):
            continue
        found = _INSTRUCTION.match(line)
        if found is None:
            raise InspectError(f"kernel {kernel}: cannot parse SASS line {line.strip()!r}")
        instructions.append(
            Instruction(int(found["offset"], 16), found["mnemonic"], " ".join(found["assembly"].split()))
        )
    return tuple(instructions)


def run_nvdisasm(image: bytes, options: list[str], what: str) -> str:
    """nvdisasm's listing of ``image`` (a cubin, or raw code with ``--binary``); ``what`` names it in errors."""
    nvdisasm = locate_tool("nvdisasm", NVDISASM_PACKAGE)
    with tempfile.TemporaryDirectory(prefix="coop-inspect-") as folder:
        path = Path(folder) / "image"
        path.write_bytes(image)
        try:
            done = subprocess.run(
                # --no-dataflow: it only infers labels for branch-stack jumps, which nothing here
                # reads, and it doubles nvdisasm's run time.
                [str(nvdisasm), *options, "--print-code", "--no-dataflow", str(path)],
                capture_output=True, text=True, timeout=NVDISASM_TIMEOUT_S, check=False,
            )
        except subprocess.TimeoutExpired:
            raise InspectError(f"{what}: {nvdisasm} ran past {NVDISASM_TIMEOUT_S} s") from None
    if done.returncode != 0:
        raise InspectError(f"{what}: {nvdisasm} exited with {done.returncode}: {done.stderr.strip()[-500:]}")
    return done.stdout
