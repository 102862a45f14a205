"""The harness's module structure: it never imports the tests, and its
modules form no import circle (imports inside functions count too: a
circle there is a circle all the same, only deferred)."""
from __future__ import annotations

import ast
from pathlib import Path

from tests.graphs import circle

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("harness", "golden")


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _modules() -> dict[str, Path]:
    return {_module_name(p): p for package in PACKAGES for p in (ROOT / package).rglob("*.py")}


def _imports(path: Path, name: str, known: set[str]) -> set[str]:
    """The modules of `known` that a module imports, anywhere in it, except
    under `if __name__ == "__main__":` (a script's entry, not an import)."""
    tree = ast.parse(path.read_text(), str(path))
    tree.body = [n for n in tree.body if not (isinstance(n, ast.If) and "__main__" in ast.unparse(n.test))]
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(package.split(".")[: len(package.split(".")) - node.level + 1] + ([base] if base else []))
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names)
    return {m for m in found if m in known and m != name}


def _graph() -> dict[str, set[str]]:
    modules = _modules()
    return {name: _imports(path, name, set(modules)) for name, path in modules.items()}


def test_the_harness_never_imports_the_tests_or_the_suite():
    offenders = []
    for name, path in _modules().items():
        tree = ast.parse(path.read_text(), str(path))
        for node in ast.walk(tree):
            targets = ([a.name for a in node.names] if isinstance(node, ast.Import)
                       else [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            offenders += [f"{name} imports {t}" for t in targets if t.split(".")[0] in ("tests", "suite")]
    assert offenders == []


def test_no_module_of_the_harness_imports_itself_back_through_others():
    # A package imports its own submodules freely (harness.targets -> harness.targets.qemu
    # through importlib is not seen here); a circle is any other loop.
    graph = _graph()
    assert circle(graph) is None, " -> ".join(circle(graph))


def test_the_cycle_finder_finds_a_circle():
    assert circle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert circle({"a": {"b"}, "b": set()}) is None
