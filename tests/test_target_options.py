"""A target takes its options as constructor arguments and reads no
environment variable itself: its package's options_from_environment says
which variable feeds which option, and harness/targets/__init__.py is the
one place that calls it with os.environ (make_target, choose_target)."""
from __future__ import annotations

import ast
import importlib
import inspect
import os
import subprocess
import sys
from pathlib import Path

import pytest

from harness.option_values import OptionValueError
from harness.targets import choose_target, environment_options, make_target, target_names

ROOT = Path(__file__).resolve().parent.parent
TARGETS = ROOT / "harness" / "targets"
OPTIONS_FUNCTION = "options_from_environment"
# What reads the environment: os.environ (os.environb, os.getenv), a name
# `environ` (from os, or a parameter that takes it) ...
ENVIRONMENT_NAMES = {"environ", "environb", "getenv"}
# ... and harness/option_values.py's helpers, which read os.environ unless
# they are given the mapping to read.
ENVIRONMENT_HELPERS = {"from_env", "env_number", "env_switch"}


def _called_name(call: ast.Call) -> str | None:
    func = call.func
    return func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None


def _reads_outside(node: ast.AST) -> list[tuple[int, str]]:
    """Every read of the environment under node."""
    found = []
    for each in ast.walk(node):
        if isinstance(each, ast.Attribute) and each.attr in ENVIRONMENT_NAMES:
            found.append((each.lineno, ast.unparse(each)))
        elif isinstance(each, ast.Name) and each.id in ENVIRONMENT_NAMES:
            found.append((each.lineno, each.id))
        elif isinstance(each, ast.ImportFrom) and each.module == "os" and \
                any(alias.name in ENVIRONMENT_NAMES for alias in each.names):
            found.append((each.lineno, f"from os import {', '.join(a.name for a in each.names)}"))
        elif isinstance(each, ast.Call) and _called_name(each) in ENVIRONMENT_HELPERS:
            found.append((each.lineno, f"{_called_name(each)}(...)"))
    return found


def _reads_inside(function: ast.FunctionDef) -> list[tuple[int, str]]:
    """What options_from_environment reads besides the mapping it is given:
    os.environ itself, or a helper not handed the mapping (which then reads
    os.environ)."""
    mapping = function.args.args[0].arg if function.args.args else None
    found = []
    for each in ast.walk(function):
        if isinstance(each, ast.Attribute) and each.attr in ENVIRONMENT_NAMES:
            found.append((each.lineno, ast.unparse(each)))
        elif isinstance(each, ast.Call) and _called_name(each) in ENVIRONMENT_HELPERS:
            arguments = [*each.args, *(keyword.value for keyword in each.keywords)]
            if not any(isinstance(a, ast.Name) and a.id == mapping for a in arguments):
                found.append((each.lineno, f"{_called_name(each)}(...) without {mapping}"))
    return found


def environment_reads(source: str) -> list[tuple[int, str]]:
    """(line, what) of each read of the environment in a module, outside its
    module-level options_from_environment(environ) (or a part of it named
    *_options_from_environment), which reads only the mapping it is given."""
    found = []
    for node in ast.parse(source).body:
        if isinstance(node, ast.FunctionDef) and node.name.endswith(OPTIONS_FUNCTION):
            found += _reads_inside(node)
        else:
            found += _reads_outside(node)
    return sorted(set(found))


def test_no_target_module_reads_the_environment_outside_options_from_environment():
    """The registry (harness/targets/__init__.py) reads it for them; a child
    process's environment is built outside the targets too
    (harness.target.child_environment)."""
    modules = [p for p in sorted(TARGETS.rglob("*.py")) if p != TARGETS / "__init__.py"]
    assert {p.parent.name for p in modules} >= set(target_names())
    offenders = [f"{path.relative_to(ROOT)}:{line}: {what}"
                 for path in modules for line, what in environment_reads(path.read_text())]
    assert offenders == []


@pytest.mark.parametrize("source, lines", [
    ("import os\nx = os.environ.get('A')\n", [2]),
    ("import os\nx = os.environ['A']\n", [2]),
    ("import os\nx = os.getenv('A')\n", [2]),
    ("from os import environ\nx = environ.get('A')\n", [1, 2]),
    ("def find(environ):\n    return environ.get('A')\n", [2]),
    ("class T:\n    def __init__(self):\n        import os\n        self.a = dict(os.environ)\n", [4]),
    ("from harness.option_values import env_number\nx = env_number('A', 1, 'a number')\n", [2]),
    ("class T:\n    def options_from_environment(self, environ):\n        return environ.get('A')\n", [3]),
    ("def options_from_environment(environ):\n    return {'a': environ.get('A')}\n", []),
    ("def options_from_environment(environ):\n    return {'a': env_number('A', None, 'n', environ)}\n", []),
    ("def options_from_environment(environ):\n    return {'a': env_number('A', None, 'n')}\n", [2]),
    ("import os\ndef options_from_environment(environ):\n    return {'a': os.environ.get('A')}\n", [3]),
])
def test_the_environment_read_finder_sees_each_way_of_reading_it(source, lines):
    assert [line for line, _ in environment_reads(source)] == lines


# target, variable, a good value and the keyword argument it gives, a bad value and the start of its message
OPTIONS = [
    ("qemu", "PTL_QEMU_CONSOLE", "uart", ("console", "uart"),
     "serial", "PTL_QEMU_CONSOLE=serial: must be one of semihost, uart"),
    ("qemu", "PTL_QEMU_INSN_BUDGET", "2000000", ("insn_budget", 2_000_000),
     "1.5", "PTL_QEMU_INSN_BUDGET=1.5: must be a positive whole number of instructions per measured region"),
    ("qemu", "PTL_TEAM_ORDER", "reverse", ("team_order", "reverse"),
     "sideways", "PTL_TEAM_ORDER=sideways: must be a team order: one of free, forward, reverse, rotate or random:SEED"),
    ("host", "PTL_TEAM_ORDER", "random:7", ("team_order", "random:7"),
     "sideways", "PTL_TEAM_ORDER=sideways: must be a team order: one of free, forward, reverse, rotate or random:SEED"),
    ("host", "PTL_HOST_CC", "clang", ("compiler", "clang"), None, None),
    ("gvsoc", "PTL_GVSOC_CYCLE_BUDGET", "5000000", ("cycle_budget", 5_000_000),
     "0", "PTL_GVSOC_CYCLE_BUDGET=0: must be a positive whole number of SoC cycles per measured region"),
    ("gvsoc", "PTL_GVSOC", "/opt/gvsoc", ("gvsoc", "/opt/gvsoc"), None, None),
    ("board", "PTL_BOARD_ATTEMPTS", "2", ("attempts", 2),
     "x", "PTL_BOARD_ATTEMPTS=x: must be a whole number of at least 1"),
    ("board", "PTL_BOARD_QUARANTINE_AFTER", "5", ("quarantine_after", 5),
     "0", "PTL_BOARD_QUARANTINE_AFTER=0: must be a whole number of at least 1"),
    ("board", "PTL_BOARD_ANSWER_TIMEOUT", "0.5", ("answer_timeout", 0.5),
     "nan", "PTL_BOARD_ANSWER_TIMEOUT=nan: must be a positive number of seconds"),
    ("board", "PTL_BOARD_TAGS", "gap9,lab-2", ("tags", ["gap9", "lab-2"]), None, None),
    ("board", "PTL_BOARDS", "/lab/boards.toml", ("inventory", Path("/lab/boards.toml")), None, None),
    ("board", "PTL_BOARD_STATE", "/tmp/ptl-state", ("state_dir", Path("/tmp/ptl-state")), None, None),
    ("qemu", "PTL_PAYLOAD_DELIVERY", "compiled-in", ("delivery", "compiled-in"),
     "file", "PTL_PAYLOAD_DELIVERY=file: must be one of loader, compiled-in"),
    ("host", "PTL_PAYLOAD_DELIVERY", "compiled-in", ("delivery", "compiled-in"),
     "loader", "PTL_PAYLOAD_DELIVERY=loader: must be one of file, compiled-in"),
    ("gvsoc", "PTL_PAYLOAD_DELIVERY", "compiled-in", ("delivery", "compiled-in"),
     "serial", "PTL_PAYLOAD_DELIVERY=serial: must be one of loader, compiled-in"),
    ("board", "PTL_PAYLOAD_DELIVERY", "serial", ("delivery", "serial"),
     "compiled-in", "PTL_PAYLOAD_DELIVERY=compiled-in: must be one of serial"),
]


@pytest.mark.parametrize("target, variable, good, option, bad, says", OPTIONS,
                         ids=[f"{row[0]}-{row[1]}" for row in OPTIONS])
def test_a_targets_variable_is_one_constructor_keyword_and_a_bad_value_one_line_naming_it(
        target, variable, good, option, bad, says, tmp_path):
    package = importlib.import_module(f"harness.targets.{target}")
    options = package.options_from_environment({variable: good})
    assert options == dict([option])
    assert option[0] in inspect.signature(package.TARGET_CLASS.__init__).parameters
    package.TARGET_CLASS(**options)     # the constructor takes it as it comes
    assert package.options_from_environment({variable: ""}) == {}   # empty is unset: the default
    if bad is not None:
        with pytest.raises(OptionValueError) as error:
            package.options_from_environment({variable: bad})
        assert str(error.value).startswith(says) and "\n" not in str(error.value)


def test_every_variable_of_a_target_is_in_the_table():
    """Each package with options: its variables (the keys of a full
    environment it takes) are the table's."""
    covered = {(target, option[0]) for target, _, _, option, _, _ in OPTIONS}
    for name in target_names():
        package = importlib.import_module(f"harness.targets.{name}")
        if hasattr(package, "options_from_environment"):
            full = package.options_from_environment({row[1]: row[2] for row in OPTIONS if row[0] == name})
            assert {(name, keyword) for keyword in full} == {pair for pair in covered if pair[0] == name}
            assert package.options_from_environment({}) == {}


def test_make_target_reads_the_environment_only_when_it_is_not_given_options(monkeypatch):
    monkeypatch.setenv("PTL_QEMU_CONSOLE", "uart")
    monkeypatch.setenv("PTL_QEMU_INSN_BUDGET", "123")
    assert (make_target("qemu").console, make_target("qemu").insn_budget) == ("uart", 123)
    assert make_target("qemu", {}).console == "semihost"
    given = make_target("qemu", {"insn_budget": 7})
    assert (given.console, given.insn_budget) == ("semihost", 7)
    monkeypatch.setenv("PTL_QEMU_CONSOLE", "serial")
    with pytest.raises(OptionValueError, match="^PTL_QEMU_CONSOLE=serial: must be one of semihost, uart$"):
        make_target("qemu")
    assert make_target("qemu", {}).console == "semihost"   # given options: the environment is not read


def test_choose_target_takes_options_by_target_name(monkeypatch):
    monkeypatch.setenv("PTL_TEAM_ORDER", "reverse")
    assert choose_target("host").team_order == "reverse"
    assert choose_target("host", {"host": {"team_order": "rotate"}}).team_order == "rotate"
    assert choose_target("host", {"qemu": {}}).team_order == "reverse"   # host not named: the environment's
    with pytest.raises(ValueError, match="options for unknown target"):
        choose_target("host", {"team_order": "rotate"})


def test_a_package_without_options_from_environment_gets_no_options(monkeypatch):
    import harness.targets.host as host
    monkeypatch.delattr(host, "options_from_environment")
    monkeypatch.setenv("PTL_TEAM_ORDER", "reverse")
    assert environment_options("host") == {}
    assert make_target("host").team_order == "free"


def test_a_host_run_passes_the_team_order_to_the_runner_in_its_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("PTL_TEAM_ORDER", "free")
    monkeypatch.setenv("PTL_SOMETHING_ELSE", "kept")
    (tmp_path / "runner").write_text('#!/bin/sh\necho "$PTL_TEAM_ORDER $PTL_SOMETHING_ELSE"\n')
    (tmp_path / "runner").chmod(0o755)
    raw = make_target("host", {"team_order": "rotate"}).run(tmp_path, None, 10, tmp_path)
    assert raw.returncode == 0 and raw.output.decode().split() == ["rotate", "kept"]


USAGE_ERROR = 4  # pytest.ExitCode.USAGE_ERROR


@pytest.mark.parametrize("target, variable, value, says", [
    ("gvsoc", "PTL_GVSOC_CYCLE_BUDGET", "0",
     "PTL_GVSOC_CYCLE_BUDGET=0: must be a positive whole number of SoC cycles per measured region"),
    ("host", "PTL_TEAM_ORDER", "sideways", "PTL_TEAM_ORDER=sideways: must be a team order"),
])
def test_a_bad_variable_of_the_chosen_target_is_one_usage_error_before_it_is_made(target, variable, value, says):
    result = subprocess.run([sys.executable, "-m", "pytest", "suite/test_ops.py", "--family", "pool", "-p", "no:xdist",
                             "-q", "--collect-only", "--target", target], capture_output=True, text=True, cwd=ROOT,
                            timeout=120, env={**os.environ, variable: value})
    assert result.returncode == USAGE_ERROR, result.stdout + result.stderr
    errors = [line for line in result.stderr.splitlines() if line.startswith("ERROR:")]
    assert len(errors) == 1 and says in errors[0], result.stderr
    assert "Traceback" not in result.stdout + result.stderr and "INTERNALERROR" not in result.stdout
