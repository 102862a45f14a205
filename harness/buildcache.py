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
import shutil
import tempfile
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
