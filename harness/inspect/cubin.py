"""Resource figures of one kernel, read from the ELF of a linked cubin.

Where each figure lives (CUDA 13 ptxas output for sm_90; every figure is cross-checked against
``cuobjdump --dump-resource-usage`` and ``ptxas -v`` by ``tests/inspect``):

* arch: ``e_flags``. ``EI_ABIVERSION`` 7 (``ELFABIVERSION_CUDA_V1``) keeps the SM number in the low
  byte, 8 (``ELFABIVERSION_CUDA_V2``, CUDA 13) in the second byte (LLVM
  ``llvm/BinaryFormat/ELF.h``: ``EF_CUDA_SM``, ``EF_CUDA_SM_MASK``).
* registers, local and stack: ``EIATTR`` records of the module-wide ``.nv.info`` section, each
  holding (symbol index, value): ``EIATTR_REGCOUNT`` (0x2f, registers per thread, callees
  included), ``EIATTR_FRAME_SIZE`` (0x11, the kernel's own per-thread frame in local memory:
  local arrays and spills; ptxas's "bytes stack frame"), ``EIATTR_MIN_STACK_SIZE`` (0x12, the
  per-thread stack a launch reserves: that frame plus the deepest chain of callee frames;
  cuobjdump's ``STACK``). One ptxas run folds the module's callees into the kernel's frame, so
  the two agree there; device-linked code keeps a callee's frame apart. cuobjdump's ``LOCAL``
  counts only module-scope ``.local`` variables, which the sm_90 ABI forbids, so it reads 0 even
  for a kernel that spills: ``local_bytes`` is the frame instead.
* barriers: ``EIATTR_NUM_BARRIERS`` (0x4c) in the kernel's ``.nv.info.<kernel>``; older images keep
  the count in bits 20-26 of the ``.text.<kernel>`` section flags, which nvlink moves into that
  record when it links.
* shared memory: the size of ``.nv.shared.<kernel>``. For sm_90, ptxas places the 1 KiB per block
  that CUDA reserves for the system (``cudaDevAttrReservedSharedMemoryPerBlock``) at the start of
  that section whenever the kernel can touch shared memory, and marks such images with a
  ``.nv.shared.reserved.0`` section; the kernel's own data starts at offset 0x400 (``ptxas -v``
  reports the section size minus 1024). That window is reported apart, so an algorithm that
  uses no shared memory reads 0 even next to a kernel that declares dynamic shared memory.

Record layout (a byte of format, a byte of attribute, 16 bits, then for ``EIFMT_SVAL`` that many
payload bytes) and attribute codes are as ``cuobjdump -elf`` decodes them; the code table is also
written out in GrigoryEvko/nvopen-tools' notes on nvlink's ``.nv.info`` handling.
"""

from __future__ import annotations

import functools
import hashlib
import io
import struct
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from elftools.common.exceptions import ELFError
from elftools.elf.elffile import ELFFile

from harness.inspect.errors import InspectError

EIATTR_FRAME_SIZE = 0x11
EIATTR_MIN_STACK_SIZE = 0x12
EIATTR_REGCOUNT = 0x2F
EIATTR_NUM_BARRIERS = 0x4C

EIFMT_NVAL, EIFMT_BVAL, EIFMT_HVAL, EIFMT_SVAL = 1, 2, 3, 4

ELFABIVERSION_CUDA_V1 = 7
ELFABIVERSION_CUDA_V2 = 8

#: Bits 20-26 of a ``.text.<kernel>`` section's flags: the barrier count before nvlink moves it.
TEXT_FLAGS_BARRIER_SHIFT, TEXT_FLAGS_BARRIER_MASK = 20, 0x7F
#: The system's shared memory window at the start of each kernel's shared section (sm_90).
RESERVED_SHARED_BYTES = 1024
RESERVED_SHARED_MARKER = ".nv.shared.reserved.0"


@dataclass(frozen=True)
class KernelResources:
    """The figures the ELF holds for one kernel (per thread, except shared memory and barriers)."""

    arch: str
    registers: int
    shared_static_bytes: int
    shared_reserved_bytes: int
    local_bytes: int
    stack_bytes: int
    barriers: int


def read_resources(cubin: bytes, kernel: str) -> KernelResources:
    """Read ``kernel``'s figures from ``cubin``; :class:`InspectError` names the kernel and the problem."""
    try:
        return _read(image(cubin), kernel)
    except ELFError as exc:
        raise InspectError(f"kernel {kernel}: cubin is not a readable ELF image: {exc}") from None


@dataclass(frozen=True)
class _Image:
    """One parsed cubin: the symbol table and module attributes are read once for all its kernels."""

    elf: Any
    functions: dict[str, tuple[int, Any]]
    module: list[tuple[int, int, int]]


@functools.lru_cache(maxsize=64)
def digest(cubin: bytes) -> str:
    """The sha256 of ``cubin``, once per image: a fatbin's cubin of thousands of kernels is asked for once per
    kernel (30 MB, 17 ms a time)."""
    return hashlib.sha256(cubin).hexdigest()


@functools.lru_cache(maxsize=64)
def image(cubin: bytes) -> _Image:
    """A fatbin's one cubin holds hundreds of kernels: parse it once per process, not once per kernel. A host
    lane's batch (:mod:`harness.inspect.batched`, 32 one-kernel cubins) reads each twice: for its SASS, then for
    its figures."""
    elf = ELFFile(io.BytesIO(cubin))
    symtab = elf.get_section_by_name(".symtab")
    functions = {}
    if symtab is not None:
        for index, symbol in enumerate(symtab.iter_symbols()):
            if symbol["st_info"]["type"] == "STT_FUNC":
                functions[symbol.name] = (index, symbol)
    return _Image(elf, functions, _attributes(elf, ".nv.info", "(module)"))


def _read(image: _Image, kernel: str) -> KernelResources:
    elf = image.elf
    if elf.header.e_machine != "EM_CUDA":
        raise InspectError(f"kernel {kernel}: cubin is an ELF for {elf.header.e_machine}, not EM_CUDA")
    if elf.header.e_type != "ET_EXEC":
        raise InspectError(
            f"kernel {kernel}: cubin is {elf.header.e_type}, not a linked image (ET_EXEC); "
            "stack sizes and shared layout are settled only at link time"
        )
    index, symbol = _function_symbol(image, kernel)
    text = elf.get_section(symbol["st_shndx"])
    if text.name != f".text.{kernel}":
        raise InspectError(f"kernel {kernel}: its symbol points into {text.name}, not .text.{kernel}")
    module = image.module
    own = _attributes(elf, f".nv.info.{kernel}", kernel)

    def figure(code: int, name: str) -> int:
        values = [value for attr, sym, value in module if attr == code and sym == index]
        if len(values) != 1:
            raise InspectError(f"kernel {kernel}: .nv.info holds {len(values)} {name} records, expected 1")
        return values[0]

    static, reserved = _shared(elf, kernel)
    return KernelResources(
        arch=f"sm_{sm_number(elf, kernel)}",
        registers=figure(EIATTR_REGCOUNT, "EIATTR_REGCOUNT"),
        shared_static_bytes=static,
        shared_reserved_bytes=reserved,
        local_bytes=figure(EIATTR_FRAME_SIZE, "EIATTR_FRAME_SIZE"),
        stack_bytes=figure(EIATTR_MIN_STACK_SIZE, "EIATTR_MIN_STACK_SIZE"),
        barriers=_barriers(own, text["sh_flags"]),
    )


def _barriers(own: list[tuple[int, int, int]], text_flags: int) -> int:
    recorded = [value for attr, _, value in own if attr == EIATTR_NUM_BARRIERS]
    if recorded:
        return recorded[0]
    return (text_flags >> TEXT_FLAGS_BARRIER_SHIFT) & TEXT_FLAGS_BARRIER_MASK


def sm_number(elf: Any, kernel: str) -> int:
    """The SM number ``e_flags`` holds (90 for sm_90)."""
    flags, abi = elf.header.e_flags, elf.header.e_ident.EI_ABIVERSION
    if abi == ELFABIVERSION_CUDA_V1:
        return int(flags & 0xFF)
    if abi == ELFABIVERSION_CUDA_V2:
        return int((flags >> 8) & 0xFF)
    raise InspectError(f"kernel {kernel}: unknown CUDA ELF ABI version {abi}")


def _function_symbol(image: _Image, kernel: str) -> tuple[int, Any]:
    if image.elf.get_section_by_name(".symtab") is None:
        raise InspectError(f"kernel {kernel}: cubin has no symbol table")
    functions = image.functions
    if kernel not in functions:
        listed = ", ".join(sorted(functions)[:20]) or "none"
        raise InspectError(f"kernel {kernel}: no such function in the cubin; its functions: {listed}")
    return functions[kernel]


def _shared(elf: Any, kernel: str) -> tuple[int, int]:
    """(the kernel's own static shared bytes, the system window ahead of them)."""
    section = elf.get_section_by_name(f".nv.shared.{kernel}")
    size = section["sh_size"] if section is not None else 0
    reserved = RESERVED_SHARED_BYTES if size and elf.get_section_by_name(RESERVED_SHARED_MARKER) else 0
    if size < reserved:
        raise InspectError(
            f"kernel {kernel}: .nv.shared.{kernel} holds {size} bytes, less than the "
            f"{reserved}-byte system window an image with {RESERVED_SHARED_MARKER} reserves"
        )
    return size - reserved, reserved


def _attributes(elf: Any, name: str, kernel: str) -> list[tuple[int, int, int]]:
    """(attribute, symbol index, value) of each record with one value; symbol -1 for inline values."""
    section = elf.get_section_by_name(name)
    if section is None:
        return []
    found = []
    for attr, fmt, payload in _records(section.data(), name, kernel):
        if fmt == EIFMT_SVAL and len(payload) == 8:
            found.append((attr, *struct.unpack("<II", payload)))
        elif fmt in (EIFMT_BVAL, EIFMT_HVAL):
            found.append((attr, -1, struct.unpack("<H", payload)[0]))
    return found


def _records(data: bytes, name: str, kernel: str) -> Iterator[tuple[int, int, bytes]]:
    """(attribute, format, payload) of each record; inline formats yield their 16-bit field."""
    offset = 0
    while offset < len(data):
        if offset + 4 > len(data):
            raise InspectError(f"kernel {kernel}: {name} ends inside a record header at byte {offset}")
        fmt, attr, field = struct.unpack_from("<BBH", data, offset)
        if fmt == EIFMT_SVAL:
            payload, offset = data[offset + 4 : offset + 4 + field], offset + 4 + field
            if len(payload) != field:
                raise InspectError(f"kernel {kernel}: {name} record 0x{attr:02x} runs past the section")
        elif fmt in (EIFMT_NVAL, EIFMT_BVAL, EIFMT_HVAL):
            payload, offset = data[offset + 2 : offset + 4], offset + 4
        else:
            raise InspectError(f"kernel {kernel}: {name} has a record of unknown format {fmt} at {offset}")
        yield attr, fmt, payload
