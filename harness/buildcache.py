"""Content-keyed cache of build artefacts, safe for parallel workers.

An artefact directory is named by the hash of everything that produced it:
the target, the toolchain versions, the flags and the bytes of every source
file. The first worker to need it builds into a private temporary directory
under an exclusive file lock and renames it into place; the others wait on
the lock and then reuse it. A failed build leaves nothing behind.

Every entry records the digest of each of its files (digests.json), and is
checked against it the first time a session uses it: a damaged entry (a
flipped byte in runner.elf or contract.json, a truncated file) is rebuilt,
with a one-line warning, never served. Cached objects carry their digest in
the same way.
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
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable

from harness import cache_layout
from harness.files import mark_used

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


DIGESTS_FILE = "digests.json"
_UNRECORDED = {DIGESTS_FILE, ".complete"}


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def entry_digests(directory: Path) -> dict[str, str]:
    """The sha256 of every file of an entry, by its path inside it."""
    return {p.relative_to(directory).as_posix(): _sha256(p) for p in sorted(directory.rglob("*"))
            if p.is_file() and p.relative_to(directory).as_posix() not in _UNRECORDED}


def entry_damage(directory: Path) -> str | None:
    """What is wrong with a complete entry's files, or None when every file
    matches the digest recorded when it was built."""
    try:
        recorded = json.loads((directory / DIGESTS_FILE).read_text())
        if not isinstance(recorded, dict):
            raise ValueError("not a table")
    except FileNotFoundError:
        return f"it has no {DIGESTS_FILE} (made by an older harness, or damaged)"
    except (OSError, ValueError) as exc:
        return f"its {DIGESTS_FILE} is unreadable ({exc})"
    for name, expected in sorted(recorded.items()):
        path = directory / name
        try:
            if _sha256(path) != expected:
                return f"{name} does not match its recorded digest"
        except OSError:
            return f"{name} is missing"
    return None


class BuildCache:
    """Entries under root/<entries>: the runner artefacts (builds), or the
    copies of the library the runs build from (library,
    harness/library_snapshot.py)."""

    def __init__(self, root: Path, warn: Callable[[str], None] | None = None, entries: str = cache_layout.BUILDS):
        self.root = Path(root) / entries
        self.compiled = 0
        self.reused = 0
        self.repaired = 0
        self.warn = warn or (lambda message: None)
        self._verified: set[Path] = set()   # entries checked in this session: hashed once, not per case

    @staticmethod
    def key_of(material: dict) -> str:
        return hashlib.sha256(json.dumps(material, sort_keys=True, default=str).encode()).hexdigest()

    @staticmethod
    def name_of(material: dict) -> str:
        """The entry's name under the store: also its measurements' artefact
        in the results database (Session.scope_for), by which a prune keeps
        the measurements of the builds it keeps."""
        return BuildCache.key_of(material)[:24]

    def _damage(self, final: Path) -> str | None:
        """None for a sound entry; "" when there is no complete entry; else what is damaged."""
        if final in self._verified:
            return None
        if not (final / ".complete").exists():
            return ""
        damage = entry_damage(final)
        if damage is None:
            self._verified.add(final)
            mark_used(final)   # once per session: what `ptl cache prune` reads
        return damage

    def get(self, material: dict, build: Callable[[Path], None]) -> Path:
        """The artefact directory for `material`, building it with
        build(tmpdir) when no worker has built it yet, or when its entry is
        damaged."""
        final = self.root / self.name_of(material)
        if self._damage(final) is None:
            self.reused += 1
            return final
        with file_lock(final.with_name(f"{final.name}.lock")):
            damage = self._damage(final)   # another worker may have built or repaired it meanwhile
            if damage is None:
                self.reused += 1
                return final
            if damage:
                self.warn(f"the build cache entry {final} is damaged: {damage}; rebuilding it")
                self.repaired += 1
            self._build_into(final, material, build)
        self.compiled += 1
        return final

    def discard(self, material: dict, reason: str) -> None:
        """Drops an entry whose files match their digests but cannot be used
        (e.g. a contract.json that does not parse): the next get rebuilds it."""
        final = self.root / self.name_of(material)
        with file_lock(final.with_name(f"{final.name}.lock")):
            self.warn(f"the build cache entry {final} is damaged: {reason}; rebuilding it")
            self.repaired += 1
            self._verified.discard(final)
            (final / ".complete").unlink(missing_ok=True)

    def _build_into(self, final: Path, material: dict, build: Callable[[Path], None]) -> None:
        self.root.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(dir=self.root, prefix=f".{final.name}."))
        try:
            build(staging)
            (staging / "material.json").write_text(json.dumps(material, indent=1, default=str))
            (staging / DIGESTS_FILE).write_text(json.dumps(entry_digests(staging), indent=1))
            (staging / ".complete").touch()
            if final.exists():  # an incomplete leftover of a killed run, or a damaged entry
                shutil.rmtree(final)
            os.rename(staging, final)
            self._verified.add(final)
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            raise


_INCLUDE = re.compile(rb'^\s*#\s*include\s*(?:"([^"]+)"|<([^>]+)>|(\S))', re.M)


@dataclass(frozen=True)
class ObjectStore:
    """Where compiled objects are kept, and what every key shares: the
    tools' versions and the build options (the build material without the
    sources)."""

    root: Path
    salt: str
    # Told, in one line, about a damaged object (which is then compiled again).
    warn: Callable[[str], None] | None = field(default=None, compare=False)


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
    a rename, so parallel workers never see half an object, and each starts
    with the sha256 of its bytes: a damaged object is compiled again, with a
    warning, never linked.
    """

    def __init__(self, store: ObjectStore, header_dirs: Iterable[Path], placeholders: dict[str, Path]):
        self.root = Path(store.root)
        self.salt = store.salt
        self.warn = store.warn or (lambda message: None)
        self.placeholders = sorted(((str(Path(p)), name) for name, p in placeholders.items()),
                                   key=lambda item: -len(item[0]))
        self.headers: dict[str, list[Path]] = {}
        for directory in map(Path, header_dirs):
            # headers, and the X-macro lists they and the sources include (ptl_kernels.def)
            found = [p for pattern in ("*.h", "*.def") for p in directory.rglob(pattern)] if directory.is_dir() else []
            for header in sorted(found):
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
        cached = self.root / f"{self._key(argv, source)[:32]}.o"
        body = _verified_object(cached)
        if isinstance(body, bytes):
            mark_used(cached)
            obj.write_bytes(body)
            return subprocess.CompletedProcess(argv, 0, "", "")
        if body:
            self.warn(f"the object cache entry {cached} (of {source.name}) is damaged: {body}; compiling it again")
        result = run(argv)
        if result.returncode == 0 and obj.is_file():
            self.root.mkdir(parents=True, exist_ok=True)
            handle, temporary = tempfile.mkstemp(dir=self.root, prefix=".obj.")
            try:
                data = obj.read_bytes()
                with os.fdopen(handle, "wb") as out:
                    out.write(_OBJECT_MAGIC + hashlib.sha256(data).digest() + data)
                os.replace(temporary, cached)
            except OSError:
                Path(temporary).unlink(missing_ok=True)
        return result


_OBJECT_MAGIC = b"PTLOBJ1\n"


def _verified_object(path: Path) -> bytes | str:
    """A cached object's bytes; "" when there is none; else what is wrong with it."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return ""
    except OSError as exc:
        return f"unreadable ({exc.strerror or exc})"
    head = len(_OBJECT_MAGIC)
    if not data.startswith(_OBJECT_MAGIC) or len(data) < head + 32:
        return "it has no digest header"
    body = data[head + 32:]
    if hashlib.sha256(body).digest() != data[head:head + 32]:
        return "its bytes do not match their recorded digest"
    return body
