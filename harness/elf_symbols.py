"""The symbols an ELF object file defines, read from its symbol table.

The runner links the library as an archive, so the linker pulls in only the
members an op needs, and two sources that define the same function pass
unnoticed. A firmware that links the whole library (every object, as PULP
SDK makefiles do) fails with "multiple definition". duplicate_definitions
finds those without a linker: it reads the strong global definitions of
each object (ELF32 and ELF64, either byte order: host and RISC-V alike).
"""
from __future__ import annotations

import struct
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

SHT_PROGBITS, SHT_SYMTAB = 1, 2
STB_GLOBAL = 1
SHN_UNDEF, SHN_COMMON = 0, 0xFFF2


class ElfError(ValueError):
    """The file is not an ELF object this reader understands."""


@dataclass(frozen=True)
class Symbol:
    name: str
    value: int
    binding: int          # STB_*
    section: int          # the index of its section (or SHN_*)


def _sections_and_symbols(data: bytes, where: str) -> tuple[list[tuple], list[Symbol]]:
    """The section headers (as tuples of the ELF fields) and every symbol of
    the symbol tables, for an ELF32 or ELF64 file of either byte order."""
    if data[:4] != b"\x7fELF" or len(data) < 52:
        raise ElfError(f"{where} is not an ELF file")
    wide = {1: False, 2: True}.get(data[4])
    order = {1: "<", 2: ">"}.get(data[5])
    if wide is None or order is None:
        raise ElfError(f"{where}: unknown ELF class or byte order")
    if wide:
        shoff, = struct.unpack_from(order + "Q", data, 0x28)
        shentsize, shnum = struct.unpack_from(order + "HH", data, 0x3A)
        section, symbol = order + "IIQQQQIIQQ", order + "IBBHQQ"
    else:
        shoff, = struct.unpack_from(order + "I", data, 0x20)
        shentsize, shnum = struct.unpack_from(order + "HH", data, 0x2E)
        section, symbol = order + "IIIIIIIIII", order + "IIIBBH"
    sections = [struct.unpack_from(section, data, shoff + i * shentsize) for i in range(shnum)]
    symbols = []
    for header in sections:
        if header[1] != SHT_SYMTAB:
            continue
        offset, size, link, entsize = header[4], header[5], header[6], header[9]
        strings_at = sections[link][4]
        for at in range(offset + entsize, offset + size, entsize):   # entry 0 is the null symbol
            fields = struct.unpack_from(symbol, data, at)
            if wide:
                name, info, _, shndx, value = fields[:5]
            else:
                name, value, info, shndx = fields[0], fields[1], fields[3], fields[5]
            end = data.index(b"\0", strings_at + name)
            symbols.append(Symbol(data[strings_at + name:end].decode(errors="replace"), value, info >> 4, shndx))
    return sections, symbols


def defined_globals(path: Path) -> set[str]:
    """The global (not weak, not common) symbols an object defines."""
    _, symbols = _sections_and_symbols(Path(path).read_bytes(), str(path))
    return {s.name for s in symbols if s.binding == STB_GLOBAL and s.section not in (SHN_UNDEF, SHN_COMMON)}


def data_offset(data: bytes, name: str) -> int:
    """The file offset of the bytes of a variable of a linked executable.
    ElfError if no symbol has that name, or if its section has no bytes in
    the file (.bss)."""
    sections, symbols = _sections_and_symbols(data, "the file")
    for symbol in symbols:
        if symbol.name == name and 0 < symbol.section < len(sections):
            header = sections[symbol.section]
            if header[1] != SHT_PROGBITS:
                raise ElfError(f"{name} has no bytes in the file (it is in .bss); it must be in .data")
            return header[4] + symbol.value - header[3]
    raise ElfError(f"no symbol {name}")


def symbol_value(data: bytes, name: str) -> int:
    """The value (the address, in a linked executable) of a symbol; ElfError if none has that name."""
    for symbol in _sections_and_symbols(data, "the file")[1]:
        if symbol.name == name:
            return symbol.value
    raise ElfError(f"no symbol {name}")


def duplicate_definitions(objects: dict[str, Path]) -> dict[str, list[str]]:
    """symbol -> the sources (keys of `objects`) that each define it, for
    every symbol defined by more than one."""
    where: dict[str, list[str]] = defaultdict(list)
    for source, obj in objects.items():
        for name in defined_globals(obj):
            where[name].append(source)
    return {name: sources for name, sources in sorted(where.items()) if len(sources) > 1}
