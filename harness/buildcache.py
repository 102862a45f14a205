"""Content-keyed cache of build artefacts, safe for parallel workers.

An artefact directory is named by the hash of everything that produced it:
the target, the toolchain versions, the flags and the bytes of every source
file. The first worker to need it builds into a private temporary directory
under an exclusive file lock and renames it into place; the others wait on
the lock and then reuse it. A failed build leaves nothing behind.
"""
from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable

SOURCE_SUFFIXES = {".c", ".h", ".S", ".s", ".ld", ".inc", ".def"}


def digest_files(paths: Iterable[Path]) -> str:
    """Hash of the files' bytes and of their names relative to the path given
    (directories are walked): the same sources checked out anywhere, on any
    machine, give the same digest."""
    digest = hashlib.sha256()
    for root_index, root in enumerate(map(Path, paths)):
        if root.is_dir():
            files = sorted((p.relative_to(root).as_posix(), p) for p in root.rglob("*")
                           if p.is_file() and p.suffix in SOURCE_SUFFIXES)
        else:
            files = [(root.name, root)] if root.exists() else []
        for name, file in files:
            digest.update(f"{root_index}:{name}:{file.stat().st_size}:".encode())
            digest.update(file.read_bytes())
    return digest.hexdigest()


@contextlib.contextmanager
def file_lock(path: Path):
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


class BuildCache:
    def __init__(self, root: Path):
        self.root = Path(root) / "builds"
        self.compiled = 0
        self.reused = 0

    @staticmethod
    def key_of(material: dict) -> str:
        return hashlib.sha256(json.dumps(material, sort_keys=True, default=str).encode()).hexdigest()

    def get(self, material: dict, build: Callable[[Path], None]) -> Path:
        """The artefact directory for `material`, building it with
        build(tmpdir) when no worker has built it yet."""
        key = self.key_of(material)
        final = self.root / key[:24]
        if (final / ".complete").exists():
            self.reused += 1
            return final
        with file_lock(self.root / f"{key[:24]}.lock"):
            if (final / ".complete").exists():
                self.reused += 1
                return final
            staging = Path(tempfile.mkdtemp(dir=self.root, prefix=f".{key[:24]}."))
            try:
                build(staging)
                (staging / "material.json").write_text(json.dumps(material, indent=1, default=str))
                (staging / ".complete").touch()
                if final.exists():  # an incomplete leftover of a killed run
                    shutil.rmtree(final)
                os.rename(staging, final)
            except BaseException:
                shutil.rmtree(staging, ignore_errors=True)
                raise
        self.compiled += 1
        return final


_INCLUDE = re.compile(rb'^\s*#\s*include\s*(?:"([^"]+)"|<([^>]+)>|(\S))', re.M)


@dataclass(frozen=True)
class ObjectStore:
    """Where compiled objects are kept, and what every key shares: the
    tools' versions and the build options (the build material without the
    sources)."""

    root: Path
    salt: str


class ObjectCache:
    """Compiled objects shared between builds, keyed by what one compilation
    reads: the compiler's argv (with the library's and the build's own
    directories as placeholders, so a copy of the library elsewhere hits),
    the tools' versions, and the bytes of the source and of every header it
    can include. A library with one edited source then recompiles that
    source only: a mutant, or a developer's change to one kernel.

    The headers are found by following the #include lines of the source
    (and of any header the command line forces in) through the header
    directories given, conditionals ignored (a superset
    of what the preprocessor reads); a computed #include makes the key take
    every header there is. Objects are stored through a temporary file and
    a rename, so parallel workers never see half an object.
    """

    def __init__(self, store: ObjectStore, header_dirs: Iterable[Path], placeholders: dict[str, Path]):
        self.root = Path(store.root)
        self.salt = store.salt
        self.placeholders = sorted(((str(Path(p)), name) for name, p in placeholders.items()),
                                   key=lambda item: -len(item[0]))
        self.headers: dict[str, list[Path]] = {}
        for directory in map(Path, header_dirs):
            for header in sorted(directory.rglob("*.h")) if directory.is_dir() else []:
                self.headers.setdefault(header.name, []).append(header)
        self._text: dict[Path, bytes] = {}

    def _read(self, path: Path) -> bytes:
        if path not in self._text:
            self._text[path] = path.read_bytes()
        return self._text[path]

    def _included(self, roots: list[Path]) -> list[Path] | None:
        """Every header the roots may read, or None when it cannot be told."""
        seen: dict[Path, None] = {}
        pending = list(roots)
        while pending:
            for quoted, angled, computed in _INCLUDE.findall(self._read(pending.pop())):
                if computed:
                    return None
                name = Path((quoted or angled).decode(errors="replace")).name
                for header in self.headers.get(name, []):
                    if header not in seen:
                        seen[header] = None
                        pending.append(header)
        return sorted(seen)

    def _key(self, argv: list[str], source: Path) -> str:
        text = " ".join(argv)
        for path, name in self.placeholders:
            text = text.replace(path, f"<{name}>")
        # the source, and the headers the command names itself (-include FILE)
        forced = [Path(arg) for arg in argv if arg.endswith(".h") and Path(arg).is_file()]
        headers = self._included([source, *forced])
        if headers is None:
            headers = sorted(h for group in self.headers.values() for h in group)
        digest = hashlib.sha256(f"{self.salt}\n{text}\n".encode())
        for file in [source, *forced, *headers]:
            body = self._read(file)
            digest.update(f"{file.name}:{len(body)}:".encode())
            digest.update(body)
        return digest.hexdigest()

    def compile(self, argv: list[str], source: Path, obj: Path,
                run: Callable[[list[str]], subprocess.CompletedProcess]) -> subprocess.CompletedProcess:
        """The object of `source` at `obj`: copied from the cache, or built
        with run(argv) and stored when it compiles."""
        cached = self.root / self._key(argv, source)[:32]
        if cached.is_file():
            shutil.copyfile(cached, obj)
            return subprocess.CompletedProcess(argv, 0, "", "")
        result = run(argv)
        if result.returncode == 0 and obj.is_file():
            self.root.mkdir(parents=True, exist_ok=True)
            handle, temporary = tempfile.mkstemp(dir=self.root, prefix=".obj.")
            os.close(handle)
            try:
                shutil.copyfile(obj, temporary)
                os.replace(temporary, cached)
            except OSError:
                Path(temporary).unlink(missing_ok=True)
        return result
