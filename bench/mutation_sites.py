"""Generated one-line mutants of a C source file, for bench/mutation_score.py.

Each mutant changes one token or one statement of one line, the way a slip
of the pen would:

- `swap A B`: a relational operator (< <=, > >=, == !=), an arithmetic one
  (+ -, * / with a space on either side, so unary minus and pointers are
  left alone) or a compound assignment (+= -=, *= /=);
- `accumulate`: `x[i] = e` becomes `x[i] += e` (an overwrite that adds to
  what the output held);
- `constant +1`: an integer or floating literal, one larger;
- `bound - 1`: a for loop's bound, one smaller (`i < n` -> `i < n - 1`);
- `drop statement` / `drop barrier`: a line that is a whole statement (an
  assignment, a call, an increment) becomes `;`;
- `swap operands`: `(a - b)` -> `(b - a)`, `(a / b)` -> `(b / a)`.

Comments and string literals are never touched, nor preprocessor lines other
than the bodies of `#define` (the matmul tiles and the format hooks are
macros), nor the lines of a branch that no build compiles: `#ifndef M` or
the `#else` of `#ifdef M` where every build defines M (LIBRARY_MACROS of
harness/build_units.py: OPTIMIZE). Other conditions are taken as compiled.

A mutant's id is stable while the file changes around it: the file, the
operator, the text of its line (stripped) and which occurrence of
that (operator, line) pair in the file it is, counted from the top.
"""
from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path

from harness.build_units import LIBRARY_MACROS

RELATIONAL = {"<": "<=", "<=": "<", ">": ">=", ">=": ">", "==": "!=", "!=": "=="}
ARITHMETIC = {"+": "-", "-": "+", "*": "/", "/": "*"}
COMPOUND = {"+=": "-=", "-=": "+=", "*=": "/=", "/=": "*="}
# Longest first, so that `<<=` is never read as `<` then `<=`.
_OPERATOR = re.compile(r"<<=|>>=|<<|>>|->|\+\+|--|<=|>=|==|!=|\+=|-=|\*=|/=|&&|\|\||[<>]")
_BINARY = re.compile(r"(?<= )[-+*/](?= )")
_LITERAL = re.compile(r"(?<![\w.])(?:(0[xX][0-9a-fA-F]+|\d+)([uUlL]*)"
                      r"|(\d+\.\d*(?:[eE][-+]?\d+)?|\.\d+(?:[eE][-+]?\d+)?|\d+[eE][-+]?\d+)([fF]?))(?![\w.])")
_ACCUMULATE = re.compile(r"\](\s*)=(?!=)")
_FOR_BOUND = re.compile(r"\bfor\s*\([^;]*;\s*[\w\[\]>.-]+\s*(?:<=|<)\s*([^;]+?)\s*;")
_OPERANDS = re.compile(r"\(([\w.\[\]]+(?:->[\w.\[\]]+)*) ([-/]) ([\w.\[\]]+(?:->[\w.\[\]]+)*)\)")
_NOT_STATEMENTS = ("return", "break", "continue", "goto", "case", "default", "else", "if", "for", "while", "do",
                   "switch", "typedef")
# `type name =`, `type *name;`, `struct x name[`, `const long a, b`: a declaration, whose loss does not build.
_DECLARATION = re.compile(r"^(?:(?:const|static|volatile|unsigned|signed|struct|register|inline)\s+)*"
                          r"[A-Za-z_]\w*(?:\s*\([^)]*\))?[\s*]+(?:const\s+)?[A-Za-z_]\w*\s*(?:=(?!=)|\[|;|,|\()")
_BARRIER = "pi_cl_team_barrier"


@dataclass(frozen=True)
class Mutant:
    file: str         # the source's name, in lib_c/sources
    operator: str     # "swap < <=", "constant +1", ...
    line: str         # the original line, stripped: with operator and occurrence, the id
    occurrence: int   # which (operator, line) pair of the file, from 0
    lineno: int       # 1-based, where it is today (not part of the id)
    mutated: str      # the mutated line, stripped

    @property
    def key(self) -> tuple[str, str, str, int]:
        return (self.file, self.operator, self.line, self.occurrence)

    @property
    def id(self) -> str:
        """A short name of the key, for the command line (--only)."""
        return hashlib.sha256("\0".join(map(str, self.key)).encode()).hexdigest()[:10]

    def apply(self, text: str) -> str:
        """The source text with this mutant in it; fails if its line moved or changed."""
        lines = text.splitlines(keepends=True)
        line = lines[self.lineno - 1]
        assert line.strip() == self.line, f"{self.file}:{self.lineno} is no longer {self.line!r}"
        indent = line[:len(line) - len(line.lstrip())]
        ending = line[len(line.rstrip("\r\n")):]
        lines[self.lineno - 1] = indent + self.mutated + ending
        return "".join(lines)


_CONDITIONAL = re.compile(r"\s*#\s*(ifdef|ifndef|if|elif|else|endif)\b(.*)$")
# The conditions read: `M`, `defined(M)`, `!defined(M)`, `defined M` (a name that
# every build defines, or not); any other is taken as depending on the build.
_ONE_NAME = re.compile(r"\s*(!?)\s*(defined\s*\(?\s*)?(\w+)\s*\)?\s*$")


class _Branches:
    """Whether the line at hand is compiled, after the conditional
    directives so far: each open #if's branch is compiled (True), never
    compiled (False) or depends on the build (None, taken as compiled)."""

    def __init__(self, defined: frozenset[str]):
        self.defined = defined
        self.stack: list[tuple[bool | None, bool]] = []   # (this branch, an earlier one was compiled)

    @property
    def dead(self) -> bool:
        return any(branch is False for branch, _ in self.stack)

    def _condition(self, kind: str, rest: str) -> bool | None:
        m = _ONE_NAME.match(rest)
        if not m or m.group(3) not in self.defined or (kind == "if" and not m.group(2)):
            return None
        return (kind != "ifndef") != (m.group(1) == "!")

    def directive(self, code: str) -> None:
        m = _CONDITIONAL.match(code)
        if not m:
            return
        kind, rest = m.groups()
        if kind in ("ifdef", "ifndef", "if"):
            branch = self._condition(kind, rest)
            self.stack.append((branch, branch is True))
        elif not self.stack:
            return   # unbalanced: the compiler says so, not this
        elif kind == "endif":
            self.stack.pop()
        else:   # else, elif
            branch, taken = self.stack.pop()
            taken = taken or branch is True
            if taken:
                self.stack.append((False, True))
            else:
                self.stack.append((True if kind == "else" and branch is False else None, False))


def _code_lines(text: str, defined: frozenset[str]) -> list[tuple[str, bool]]:
    """Each line's code, with comments and string and character literals
    blanked out (same length, so positions match the original line), and
    whether it is part of a #define. Other preprocessor lines are blank, and
    so is every line of a branch no build compiles (defined: the macros every
    build defines)."""
    found = []
    in_comment = continued = False
    directive = None
    branches = _Branches(defined)
    for line in text.splitlines():
        out = []
        i = 0
        while i < len(line):
            if in_comment:
                end = line.find("*/", i)
                stop = len(line) if end < 0 else end + 2
                out.append(" " * (stop - i))
                in_comment = end < 0
                i = stop
            elif line.startswith("/*", i):
                in_comment = True
            elif line.startswith("//", i):
                out.append(" " * (len(line) - i))
                i = len(line)
            elif line[i] in "\"'":
                quote, j = line[i], i + 1
                while j < len(line) and line[j] != quote:
                    j += 2 if line[j] == "\\" else 1
                out.append(" " * (min(j + 1, len(line)) - i))
                i = j + 1
            else:
                out.append(line[i])
                i += 1
        code = "".join(out)
        if not continued:
            directive = None
            if code.lstrip().startswith("#"):
                branches.directive(code)
                head = re.match(r"\s*#\s*define\s+\w+(\([^)]*\))?", code)
                directive = "define" if head else "other"
                code = " " * head.end() + code[head.end():] if head else ""
        elif directive == "other":
            code = ""
        continued = line.rstrip().endswith("\\")
        if continued and directive:
            cut = code.rstrip()
            code = cut[:-1] if cut.endswith("\\") else code
        found.append(("" if branches.dead else code, directive == "define"))
    return found


def _starts_statement(previous: str) -> bool:
    tail = previous.rstrip()
    return tail == "" or tail.endswith((";", "{", "}", ")", ":")) or re.search(r"\belse$", tail) is not None


def _balanced(code: str) -> bool:
    return code.count("(") == code.count(")") and code.count("[") == code.count("]")


def _bumped(match: re.Match) -> str:
    integer, int_suffix, floating, float_suffix = match.groups()
    if integer is not None:
        value = int(integer, 16 if integer[:2] in ("0x", "0X") else 10) + 1
        return (hex(value) if integer[:2] in ("0x", "0X") else str(value)) + int_suffix
    return f"({floating}{float_suffix} + 1.0{float_suffix})"


def _edits(code: str, is_define: bool, previous: str) -> list[tuple[str, int, int, str]]:
    """(operator, start, end, replacement) of every site on one line of code."""
    edits = []
    for m in _OPERATOR.finditer(code):
        op = m.group()
        if op in RELATIONAL:
            edits.append((f"swap {op} {RELATIONAL[op]}", m.start(), m.end(), RELATIONAL[op]))
        elif op in COMPOUND:
            edits.append((f"swap {op} {COMPOUND[op]}", m.start(), m.end(), COMPOUND[op]))
    for m in _BINARY.finditer(code):
        op = m.group()
        edits.append((f"swap {op} {ARITHMETIC[op]}", m.start(), m.end(), ARITHMETIC[op]))
    for m in _ACCUMULATE.finditer(code):
        edits.append(("accumulate", m.end() - 1, m.end(), "+="))
    for m in _LITERAL.finditer(code):
        edits.append(("constant +1", m.start(), m.end(), _bumped(m)))
    for m in _FOR_BOUND.finditer(code):
        bound = m.group(1)
        shifted = f"{bound} - 1" if re.fullmatch(r"[\w>.\[\]-]+", bound) else f"({bound}) - 1"
        edits.append(("bound - 1", m.start(1), m.end(1), shifted))
    for m in _OPERANDS.finditer(code):
        a, op, b = m.groups()
        edits.append(("swap operands", m.start(), m.end(), f"({b} {op} {a})"))
    statement = code.strip()
    first_word = re.match(r"[A-Za-z_]\w*", statement)
    if (not is_define and statement.endswith(";") and _starts_statement(previous) and _balanced(statement)
            and not (first_word and first_word.group() in _NOT_STATEMENTS)
            and not _DECLARATION.match(statement) and not statement.startswith(("(void)", ";", "}"))):
        start = code.index(statement[0])
        operator = "drop barrier" if statement.startswith(_BARRIER) else "drop statement"
        edits.append((operator, start, start + len(statement), ";"))
    return edits


def mutants_of(path: Path, defined: frozenset[str] = frozenset(LIBRARY_MACROS)) -> list[Mutant]:
    """Every mutant of one source file, in file order (defined: the macros
    every build defines)."""
    text = path.read_text()
    seen: dict[tuple[str, str], int] = {}
    found = []
    previous = ""
    for number, (line, (code, is_define)) in enumerate(zip(text.splitlines(), _code_lines(text, defined)), 1):
        if not code.strip():
            continue
        for operator, start, end, replacement in _edits(code, is_define, previous):
            mutated = line[:start] + replacement + line[end:]
            if mutated.strip() == line.strip():
                continue
            key = (operator, line.strip())
            occurrence = seen.get(key, 0)
            seen[key] = occurrence + 1
            found.append(Mutant(path.name, operator, line.strip(), occurrence, number, mutated.strip()))
        previous = code
    return found
