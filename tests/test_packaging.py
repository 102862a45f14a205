"""`pip install .` as a user does it: a wheel, installed non-editable in a
fresh virtual environment, runs a regression slice through the plugin it
registers (pytest11 entry point), with no checkout on the path.

Kept cheap: the wheel is built from a copy of the checkout's files (the
checkout gets no build/ or egg-info), and the fresh environment reaches the
running interpreter's site-packages through a .pth for torch and the other
dependencies, so nothing is downloaded but the build backend."""
import json
import os
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SLICE = "linear and not linear_layer and fp32 and fw and c1 and mm-c1"    # 10 variants of one host build


def _source_copy(dest: Path) -> Path:
    files = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                           capture_output=True, check=True).stdout.decode().split("\0")
    for name in filter(None, files):
        source = ROOT / name
        if source.is_file():
            target = dest / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(source.read_bytes())
    return dest


def _env() -> dict:
    return {k: v for k, v in os.environ.items()
            if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV") and not k.startswith(("PYTEST_", "PTL_"))}


def test_the_wheel_installs_every_package_and_runs_a_slice_through_the_installed_plugin(tmp_path):
    source = _source_copy(tmp_path / "src")
    wheels = tmp_path / "wheels"
    built = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(wheels), str(source)],
                           cwd=tmp_path, capture_output=True, text=True, env=_env(), timeout=600)
    assert built.returncode == 0, built.stdout[-2000:] + built.stderr[-3000:]
    wheel = next(wheels.glob("pulp_trainlib_regression-*.whl"))
    names = set(zipfile.ZipFile(wheel).namelist())
    for package in ("harness/board/__init__.py", "harness/targets/board/__init__.py", "harness/autotune/strategies/__init__.py",
                    "golden/__init__.py", "harness/catalogue/__init__.py", "suite/test_ops.py",
                    "harness/targets/board/runtime/ptl_board_link.h", "harness/runtime/runner/runner.c",
                    "lib_c/include/pulp_train.h"):
        assert package in names, f"the wheel lacks {package}"
    # Every package of the checkout is in the wheel, whatever is added later.
    for init in (ROOT / "harness").rglob("__init__.py"):
        assert init.relative_to(ROOT).as_posix() in names, f"the wheel lacks the package {init.parent}"

    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, env=_env())
    python = venv / "bin" / "python"
    purelib = Path(subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                                  capture_output=True, text=True, check=True, env=_env()).stdout.strip())
    # The dependencies (and pip) of the running interpreter, after the venv's own site-packages.
    deps = [p for p in sys.path if p.endswith(("site-packages", "dist-packages")) and Path(p).is_dir()]
    (purelib / "zz-test-deps.pth").write_text("\n".join(deps) + "\n")
    installed = subprocess.run([str(python), "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation",
                                str(wheel)], cwd=tmp_path, capture_output=True, text=True, env=_env(), timeout=300)
    assert installed.returncode == 0, installed.stderr[-3000:]

    work = tmp_path / "elsewhere"
    work.mkdir()
    where = subprocess.run([str(python), "-c", "import harness, harness.board.farm, harness.pytest_plugin, "
                            "harness.target as t; print(harness.__file__); print(t.DEFAULT_LIBRARY); "
                            "print(t.TARGETS_DIR)"], cwd=work, capture_output=True, text=True, env=_env())
    assert where.returncode == 0, where.stderr[-2000:]
    module, library, targets = (Path(line) for line in where.stdout.split())
    assert module == purelib / "harness" / "__init__.py", f"imported {module}, not the installed copy"
    assert (library / "include").is_dir() and library.is_relative_to(purelib), library
    assert (targets / "board" / "runtime" / "board_link.c").is_file() and targets.is_relative_to(purelib), targets

    reports = tmp_path / "reports"
    run = subprocess.run([str(python), "-m", "pytest", str(purelib / "suite" / "test_ops.py"), "--family", "linalg", "-q",
                          "-p", "no:randomly", "-k", SLICE, "--target", "host", "-n", "0",
                          "--reports-dir", str(reports), "--ptl-cache", str(tmp_path / "cache")],
                         cwd=work, capture_output=True, text=True, env=_env(), timeout=900)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-2000:]
    summary = json.loads((reports / "summary.json").read_text())
    assert summary["outcomes"] == {"passed": 10}, summary["outcomes"]
