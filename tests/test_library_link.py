"""The library is linked as a firmware would link it (issue 22): two library
sources that define the same symbol are a `build` failure that names the
symbol and both files. (The runner links the library as an archive, which
pulls in only the members an op needs, and so used to pass them silently.)
"""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from harness import failures, toolchain
from harness.elf_symbols import defined_globals, duplicate_definitions

ROOT = Path(__file__).resolve().parent.parent
SOURCES = {
    "a.c": "int shared_counter = 1;\nvoid duplicated(void) {}\nstatic void private_one(void) {}\n"
           "__attribute__((weak)) void overridable(void) {}\nvoid only_in_a(void) { private_one(); }\n",
    "b.c": "int shared_counter = 2;\nvoid duplicated(void) {}\nstatic void private_one(void) {}\n"
           "void overridable(void) {}\nextern void only_in_a(void);\nvoid only_in_b(void) { only_in_a(); }\n",
}


def compile_objects(tmp_path: Path, compiler: list[str]) -> dict[str, Path]:
    objects = {}
    for name, text in SOURCES.items():
        (tmp_path / name).write_text(text)
        objects[name] = tmp_path / f"{name}.o"
        subprocess.run([*compiler, "-c", str(tmp_path / name), "-o", str(objects[name])], check=True)
    return objects


@pytest.mark.parametrize("compiler", ["host", "riscv32"])
def test_duplicate_strong_definitions_are_found_in_host_and_riscv_objects(tmp_path, compiler):
    argv = {"host": ["gcc", "-O1"],
            "riscv32": [toolchain.RISCV_GCC, f"-march={toolchain.MARCH}", f"-mabi={toolchain.MABI}", "-O1"]}[compiler]
    if shutil.which(argv[0]) is None:
        pytest.fail(f"{argv[0]} is needed for this test")
    objects = compile_objects(tmp_path, argv)
    assert defined_globals(objects["a.c"]) == {"shared_counter", "duplicated", "only_in_a"}   # weak, static: no
    assert duplicate_definitions(objects) == {"duplicated": ["a.c", "b.c"], "shared_counter": ["a.c", "b.c"]}


def test_two_library_sources_defining_the_same_function_fail_the_build_naming_both(tmp_path):
    from harness.session import Session
    from harness.targets.host import HostTarget
    from harness.catalogue.pool import MAXPOOL

    library = tmp_path / "lib"
    shutil.copytree(ROOT / "lib_c", library)
    (library / "sources" / "pulp_extra_matmul.c").write_text(
        "/* a second definition of mm, as a careless copy would add */\n"
        "void mm(void *matMul_args) { (void)matMul_args; }\n")
    session = Session(HostTarget(), library, tmp_path / "cache")
    case = next(c for c in MAXPOOL.cases() if c.dtype == "fp32")
    variants = [v for v in MAXPOOL.variants() if v.case == case]
    results = session.results_for(case, variants)
    for result in results.values():
        assert result.failure.kind == failures.BUILD
        first = result.failure.message.splitlines()[0]
        assert "multiple definition of `mm` in pulp_extra_matmul.c and pulp_matmul_fp32.c" in first, first
    assert not (tmp_path / "cache" / "builds").exists() or not [
        p for p in (tmp_path / "cache" / "builds").iterdir() if p.is_dir() and not p.name.startswith(".")]

    # The same library without the duplicate builds and passes.
    (library / "sources" / "pulp_extra_matmul.c").unlink()
    session = Session(HostTarget(), library, tmp_path / "cache")
    assert all(r.passed for r in session.results_for(case, variants).values())
