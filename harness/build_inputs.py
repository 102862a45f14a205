"""What a build takes: the library under test, the configuration, where the
runtime sources are, and the error a failed build raises. The build code
(build_units, compilers, riscv_build) and the Target interface (target.py)
both use them; neither imports the other for them."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from harness.buildcache import ObjectStore
from harness.failures import BUILD, CaseFailure

RUNTIME_DIR = Path(__file__).parent / "runtime"        # what every target compiles: the runner, shared headers
TARGETS_DIR = Path(__file__).parent / "targets"        # one package per target, its own runtime inside
DEFAULT_LIBRARY = Path(__file__).resolve().parent.parent / "lib_c"


@dataclass(frozen=True)
class LibrarySource:
    """A trainlib checkout: its public headers and its C sources."""

    root: Path
    include_dirs: tuple[Path, ...]
    sources: tuple[Path, ...]

    @classmethod
    def at(cls, path: Path) -> "LibrarySource":
        root = Path(path).resolve()
        for base in (root, root / "lib"):
            include, sources = base / "include", base / "sources"
            if include.is_dir() and sources.is_dir():
                return cls(root, (include,), tuple(sorted(sources.glob("*.c"))))
        raise CaseFailure(BUILD, f"{root} is not a trainlib checkout: expected include/ and sources/ "
                                 f"(or lib/include and lib/sources) inside it")

    @property
    def digest_roots(self) -> list[Path]:
        """Everything a build of the library reads: the public headers, and
        the source directories (their .c files and the private headers
        beside them, which the sources include)."""
        return [*self.include_dirs, *sorted({source.parent for source in self.sources})]


@dataclass(frozen=True)
class BuildConfig:
    library: LibrarySource
    fp16_format: str = "bf16"       # "fp16" (IEEE binary16) or "bf16"
    sanitize: str | None = None     # host only: "address,undefined" or "thread"
    # Objects shared between builds (harness.buildcache.ObjectStore); no part of the build's identity.
    objects: ObjectStore | None = field(default=None, compare=False)

    @property
    def label(self) -> str:
        return f"{self.fp16_format}" + (f"+{self.sanitize}" if self.sanitize else "")


class BuildError(Exception):
    """Compilation or linking failed; the message carries the compiler output."""
