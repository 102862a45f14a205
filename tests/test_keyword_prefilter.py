"""The suite applies `-k` while it makes its variants (harness/keyword_prefilter.py):
it must keep exactly the variants pytest's own `-k` keeps.

A probe plugin collects every family without `-k` (suite/test_ops.py, and
a copy with a module marker, a function marker and a function attribute,
which also count for `-k`) and compares, item by item, the names pytest's KeywordMatcher.from_item takes with the names the
prefilter computes before the item exists; and, on every tenth item, the two
verdicts for a set of expressions: names of a variant, of a marker, of the
module and the directory, with `and`, `or`, `not` and parentheses.
"""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

EXPRESSIONS = ["maxpool and fp32", "not family_linalg", "feature_", "suite and -c8]",
               "(conv2d- and HWC1) or (linear and not bias0)", "TEST_OP[MATMUL", "test_op",
               "nothing_is_named_like_this", "not test_op", "smoke", "nightly and fp32", "owner or maxpool"]

MARKED = textwrap.dedent('''
    import pytest

    from harness.pytest_plugin import variant_params

    pytestmark = pytest.mark.smoke


    def pytest_generate_tests(metafunc):
        metafunc.parametrize("variant", variant_params(metafunc.config, metafunc.definition))


    @pytest.mark.nightly
    def test_op(variant, ptl):
        ptl.check(variant)


    test_op.owner = "team"
''')

PROBE = textwrap.dedent('''
    import json

    import pytest
    from _pytest.mark import KeywordMatcher
    from _pytest.mark.expression import Expression

    from harness.keyword_prefilter import item_names, keep_by_keyword, names_beside_the_item

    EXPRESSIONS = {expressions!r}
    DEFINITIONS = {{}}

    @pytest.hookimpl(trylast=True)
    def pytest_generate_tests(metafunc):
        DEFINITIONS[metafunc.definition.parent.nodeid] = metafunc.definition

    def pytest_collection_modifyitems(config, items):
        beside, keeps = {{}}, {{}}
        for module, definition in DEFINITIONS.items():
            beside[module] = names_beside_the_item(definition)
            for text in EXPRESSIONS:
                config.option.keyword = text
                keeps[module, text] = keep_by_keyword(config, definition)
        config.option.keyword = ""
        names_differ, verdicts_differ, kept = [], [], dict.fromkeys(EXPRESSIONS, 0)
        for index, item in enumerate(items):
            module = item.parent.nodeid
            theirs = KeywordMatcher.from_item(item)
            ours = item_names(item.originalname, beside[module], item.callspec.id, item.callspec.marks)
            if set(theirs._names) != ours:
                names_differ.append([item.nodeid, sorted(theirs._names), sorted(ours)])
            if index % 10:   # same names, so the verdicts differ only if the matching does: a tenth shows it
                continue
            for text in EXPRESSIONS:
                pytest_keeps = Expression.compile(text).evaluate(theirs)
                kept[text] += pytest_keeps
                if keeps[module, text](item.callspec.id, item.callspec.marks) != pytest_keeps:
                    verdicts_differ.append([text, item.nodeid])
        with open({out!r}, "w") as f:
            json.dump({{"items": len(items), "sampled": len(items[::10]), "names_differ": names_differ[:5], "verdicts_differ": verdicts_differ[:5],
                       "kept": kept}}, f)
''')


def test_the_prefilter_keeps_exactly_what_pytests_k_keeps_for_every_variant(tmp_path):
    out = tmp_path / "probe.json"
    (tmp_path / "keyword_probe.py").write_text(PROBE.format(expressions=EXPRESSIONS, out=str(out)))
    (tmp_path / "marked").mkdir()
    (tmp_path / "marked" / "test_marked_ops.py").write_text(MARKED)
    result = subprocess.run([sys.executable, "-m", "pytest", "suite/test_ops.py", str(tmp_path / "marked"),
                             "--collect-only", "-q", "-p", "no:xdist", "-p", "keyword_probe", "--target", "host",
                             "-W", "ignore::pytest.PytestUnknownMarkWarning"],
                            cwd=ROOT, capture_output=True, text=True, timeout=600,
                            env={**os.environ, "PYTHONPATH": f"{tmp_path}:{ROOT}"})
    assert out.exists(), result.stdout[-2000:] + result.stderr[-2000:]
    probe = json.loads(out.read_text())
    assert probe["items"] > 2 * 40_000
    assert probe["names_differ"] == []
    assert probe["verdicts_differ"] == []
    kept = probe["kept"]
    # Each expression selects something and leaves something (or, by design, nothing or all).
    assert kept["nothing_is_named_like_this"] == 0 and kept["not test_op"] == 0
    assert kept["test_op"] == probe["sampled"]
    assert all(0 < kept[text] < probe["sampled"] for text in EXPRESSIONS
               if text not in ("nothing_is_named_like_this", "not test_op", "test_op"))


def test_a_run_with_k_makes_only_the_variants_it_keeps(tmp_path):
    """What the prefilter is for: the variants -k rejects are never made, so
    pytest reports none deselected."""
    result = subprocess.run([sys.executable, "-m", "pytest", "suite/test_ops.py", "--family", "linalg", "--collect-only",
                             "-q", "-p", "no:xdist", "--target", "host", "-k", "matmul-fp32-fw-N7xM8xK9 and -c8]"],
                            cwd=ROOT, capture_output=True, text=True, timeout=600)
    lines = result.stdout.rstrip().splitlines()
    assert re.fullmatch(r"[1-9]\d* tests collected in [\d.]+s", lines[-1]), result.stdout[-2000:] + result.stderr[-2000:]
    ids = [line for line in lines if line.startswith("suite/")]
    assert len(ids) == int(lines[-1].split()[0])
    assert all("matmul-fp32-fw-N7xM8xK9" in line and line.endswith("-c8]") for line in ids)


def test_a_k_that_keeps_nothing_runs_nothing_as_pytests_own_does():
    """Were the parametrization left empty, pytest would make its one
    placeholder item (test_op[NOTSET]), which `-k "not linalg"` keeps: a
    skipped test where none was asked for. So with nothing kept every variant
    is made, and pytest's -k deselects them all."""
    result = subprocess.run([sys.executable, "-m", "pytest", "suite/test_ops.py", "--family", "linalg", "--collect-only",
                             "-q", "-p", "no:xdist", "--target", "host", "-k", "not linalg"],
                            cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert result.returncode == 5, result.stdout[-2000:] + result.stderr[-2000:]
    assert re.fullmatch(r"no tests collected \([1-9]\d* deselected\) in [\d.]+s", result.stdout.rstrip().splitlines()[-1])
