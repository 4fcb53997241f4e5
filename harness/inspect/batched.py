"""Listings of many one-kernel cubins from one ``nvdisasm`` run.

nvdisasm spends about a quarter of a second setting itself up for each file it reads, whatever its size (a
5 KB cubin: 0.3 s; a 2.7 MB one of 77,648 instructions: 2 s), and a host lane lists hundreds of one-kernel
cubins (numba, cutlass). Their code sections laid end to end are one raw instruction binary (``--binary``),
listed in one run. That listing is the ELF run's, instruction for instruction, once two things are put
back: offsets start at 0 in each section, and a code address inside its section is written as the ELF run
writes it: the name of the function symbol there (`` `(kernel) ``), else a label (`` `(.L_x_N) ``, numbered by
first reference). Which operands are code addresses is not
guessed from mnemonics: the binary is listed twice, at two base addresses, and an operand that moves by the
difference is one. What raw bytes cannot say is left to the per-cubin run
(:func:`harness.inspect.sass.kernel_listing`): a cubin of several code sections, code with relocations (a call
to another module's function, named only through them), an address outside its own section, two symbols at one
address.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

from elftools.common.exceptions import ELFError
from elftools.elf.relocation import RelocationSection
from elftools.elf.sections import SymbolTableSection

from harness.inspect import sass
from harness.inspect.cubin import digest, image, sm_number
from harness.inspect.errors import InspectError

INSTRUCTION_BYTES = 16  # every instruction of the architectures nvdisasm lists here (sm_70 on)
#: The second listing's base address: beyond any batch, so an operand that moves by it is a code address.
SECOND_BASE = 1 << 32
_HEX = re.compile(r"0x[0-9a-f]+")


@dataclass(frozen=True)
class _Code:
    sha256: str
    kernel: str
    raw_arch: str  # nvdisasm's --binary name: SM90
    text: bytes
    symbols: dict[int, str]  # offset in the section -> the one named symbol there


def prefetch(cubins: Iterable[tuple[bytes, str]]) -> int:
    """List the kernels of ``cubins`` ((cubin, kernel) pairs) not listed yet, one nvdisasm run per architecture,
    into the listings :func:`harness.inspect.sass.kernel_listing` returns; returns how many it listed."""
    by_arch: dict[str, dict[str, _Code]] = defaultdict(dict)  # raw arch -> sha256 -> code
    for cubin, kernel in cubins:
        sha256 = digest(cubin)
        if not sass.listed(sha256) and (code := _one_kernel_code(cubin, sha256, kernel)) is not None:
            by_arch[code.raw_arch].setdefault(sha256, code)
    listed = 0
    for raw_arch, by_sha in by_arch.items():
        if len(by_sha) < 2:  # one file either way
            continue
        codes = list(by_sha.values())
        try:
            listings = _listings(raw_arch, codes)
        except InspectError:
            continue  # each kernel's own run then fails, naming its kernel
        for code, listing in zip(codes, listings, strict=True):
            if listing is not None:
                sass.remember(code.sha256, {f".text.{code.kernel}": listing})
                listed += 1
    return listed


def _one_kernel_code(cubin: bytes, sha256: str, kernel: str) -> _Code | None:
    """The code of a cubin whose only code section is ``.text.<kernel>`` and which nothing relocates; else None.
    The parse is :func:`harness.inspect.cubin.image`'s, which the kernel's figures read next."""
    try:
        elf = image(cubin).elf
        sections = list(elf.iter_sections())
        texts = [i for i, s in enumerate(sections) if s.name.startswith(".text.")]
        if len(texts) != 1 or sections[texts[0]].name != f".text.{kernel}":
            return None
        code_relocations = {f".rel.text.{kernel}", f".rela.text.{kernel}"}
        if any(isinstance(s, RelocationSection) and s.name in code_relocations and s.num_relocations()
               for s in sections):
            return None
        symbols: dict[int, list[str]] = defaultdict(list)
        for section in sections:
            if isinstance(section, SymbolTableSection):
                for symbol in section.iter_symbols():
                    if symbol.name and symbol["st_shndx"] == texts[0] and symbol["st_info"]["type"] != "STT_SECTION":
                        symbols[symbol["st_value"]].append(symbol.name)
        raw_arch = f"SM{sm_number(elf, kernel)}"
        data = sections[texts[0]].data()
    except (ELFError, InspectError, ValueError):
        return None  # the per-cubin run says what is wrong with it
    if not data or len(data) % INSTRUCTION_BYTES or any(len(names) > 1 for names in symbols.values()):
        return None
    return _Code(sha256, kernel, raw_arch, data, {at: names[0] for at, names in symbols.items()})


def _listings(raw_arch: str, codes: list[_Code]) -> list[str | None]:
    """Each code's listing as the ELF run prints its instructions (None where that cannot be rebuilt)."""
    blob = b"".join(c.text for c in codes)
    runs = [{i.offset - base: i for i in sass.parse_listing(_disassemble_raw(blob, raw_arch, base), "(batched)")}
            for base in (0, SECOND_BASE)]
    if any(len(run) != len(blob) // INSTRUCTION_BYTES for run in runs):
        return [None] * len(codes)
    out: list[str | None] = []
    start = 0
    for code in codes:
        offsets = range(start, start + len(code.text), INSTRUCTION_BYTES)
        out.append(_section_listing(code, start, [(runs[0].get(o), runs[1].get(o)) for o in offsets]))
        start += len(code.text)
    return out


def _section_listing(code: _Code, start: int,
                     pairs: list[tuple[sass.Instruction | None, sass.Instruction | None]]) -> str | None:
    """The section's listing from its instructions at the two bases; None when an operand moved by other than the
    bases' difference or a code address falls outside the section."""
    labels: dict[int, int] = {}
    lines = [f"//{'-' * 20} .text.{code.kernel} {'-' * 20}"]
    for offset, (first, second) in zip(range(0, len(code.text), INSTRUCTION_BYTES), pairs, strict=True):
        if first is None or second is None or first.mnemonic != second.mnemonic:
            return None
        here, there = _HEX.findall(first.assembly), _HEX.findall(second.assembly)
        if len(here) != len(there) or _HEX.sub("", first.assembly) != _HEX.sub("", second.assembly):
            return None
        parts = _HEX.split(first.assembly)
        assembly = parts[0]
        for value, moved, text in zip(here, there, parts[1:], strict=True):
            shift = int(moved, 16) - int(value, 16)
            if shift == 0:
                assembly += value + text
                continue
            relative = int(value, 16) - start
            if shift != SECOND_BASE or not 0 <= relative <= len(code.text):
                return None
            name = code.symbols.get(relative) or f".L_x_{labels.setdefault(relative, len(labels))}"
            assembly += f"`({name})" + text
        lines.append(f"        /*{offset:04x}*/                   {assembly} ;")
    return "\n".join(lines) + "\n"


def _disassemble_raw(blob: bytes, raw_arch: str, base: int) -> str:
    return sass.run_nvdisasm(blob, ["--binary", raw_arch, "--base-address", hex(base)],
                             f"a batch of {len(blob) // INSTRUCTION_BYTES} instructions")
