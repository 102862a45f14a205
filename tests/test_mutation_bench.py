"""bench/mutation_score.py's parts that decide what it measures, without
running a mutant: which lines the generated mutants touch and how, that a
mutant's id survives edits elsewhere in its file, that the sample reaches
every family and follows its seed, that every family's cases exist, and that
the reviewed survivors name real mutants with a class (and, for an
equivalent one, the reason)."""
from __future__ import annotations

import re
from fnmatch import fnmatch

import pytest

from bench import mutation_score as bench
from bench.mutation_sites import mutants_of
from harness.cases import OpEntry

C_TEXT = """\
/* a comment with i < n and 1 + 2 */
#include <stdio.h>
#define ADD(a, b) ((a) + (b))
#if N > 1
static const int big = 2;
#endif
void f(float *y, const float *x, int n)
{
    const char *s = "i < n + 1";
    for (int i = 0; i < n; i++) {
        y[i] = x[i] * 2.0f;   // doubles: 3 * 4
        pi_cl_team_barrier();
    }
    for (int i = 0; i < n; i++) {
        y[i] = x[i] * 2.0f;   // doubles: 3 * 4
    }
}
"""


@pytest.fixture
def source(tmp_path):
    path = tmp_path / "pulp_demo_fp32.c"
    path.write_text(C_TEXT)
    return path


def test_comments_strings_and_directives_other_than_define_bodies_are_left_alone(source):
    mutants = mutants_of(source)
    touched = {m.lineno for m in mutants}
    assert touched == {3, 5, 10, 11, 12, 14, 15}   # not the comment, #include, #if or the string (1, 2, 4, 9)
    define = [m for m in mutants if m.lineno == 3]
    assert [m.mutated for m in define] == ["#define ADD(a, b) ((a) - (b))"]
    for m in mutants:
        assert "3 * 4" in m.mutated or m.lineno not in (11, 15), "the trailing comment is never mutated"


def test_the_operators(source):
    got = {(m.lineno, m.operator, m.mutated) for m in mutants_of(source)}
    assert (10, "swap < <=", "for (int i = 0; i <= n; i++) {") in got
    assert (10, "bound - 1", "for (int i = 0; i < n - 1; i++) {") in got
    assert (10, "constant +1", "for (int i = 1; i < n; i++) {") in got
    assert (11, "swap * /", "y[i] = x[i] / 2.0f;   // doubles: 3 * 4") in got
    assert (11, "accumulate", "y[i] += x[i] * 2.0f;   // doubles: 3 * 4") in got
    assert (11, "constant +1", "y[i] = x[i] * (2.0f + 1.0f);   // doubles: 3 * 4") in got
    assert (11, "drop statement", ";   // doubles: 3 * 4") in got
    assert (12, "drop barrier", ";") in got
    # a declaration is never dropped: that mutant would not build
    assert not [m for m in mutants_of(source) if m.operator.startswith("drop") and "const" in m.line]


BRANCHES = """\
#ifdef OPTIMIZE
#define KIND(opt) ((opt) + 0)
#else
#define KIND(opt) ((void)(opt), 0)
#endif
#ifndef OPTIMIZE
int slow = 1;
#elif FAST > 1
int fast = 2;
#endif
#if !defined(OPTIMIZE)
int a = 3;
#else
#if defined(__clang__) && N > 1
int b = 4;
#else
int c = 5;
#endif
#endif
#ifdef FASTEXPF
int d = 6;
#endif
"""


def test_a_branch_that_no_build_compiles_has_no_mutants(tmp_path):
    path = tmp_path / "pulp_branches_fp32.c"
    path.write_text(BRANCHES)
    touched = {m.lineno for m in mutants_of(path, defined=frozenset({"OPTIMIZE"}))}
    # 4, 7, 12: only without OPTIMIZE; 9 (an #elif after a branch that is
    # not compiled), 15, 17 (a condition it does not read) and 21 (a macro a
    # user may define) are taken as compiled
    assert touched == {2, 9, 15, 17, 21}
    assert {m.lineno for m in mutants_of(path, defined=frozenset())} == {2, 4, 7, 9, 12, 15, 17, 21}


def test_an_id_is_file_operator_line_and_occurrence_and_survives_edits_elsewhere(source):
    before = mutants_of(source)
    twins = [m for m in before if m.line.startswith("y[i] = x[i] * 2.0f") and m.operator == "accumulate"]
    assert [(m.lineno, m.occurrence) for m in twins] == [(11, 0), (15, 1)]
    assert len({m.id for m in before}) == len(before)
    source.write_text(C_TEXT.replace("void f(", "/* moved */\nint g(void) { return 0; }\nvoid f("))
    after = {m.key: m for m in mutants_of(source)}
    for m in before:
        assert m.key in after and after[m.key].id == m.id
        assert after[m.key].lineno == m.lineno + (2 if m.lineno > 7 else 0)


def test_applying_a_mutant_changes_its_own_line_only(source):
    second = next(m for m in mutants_of(source) if m.operator == "accumulate" and m.occurrence == 1)
    text = source.read_text()
    mutated = second.apply(text)
    changed = [n for n, (a, b) in enumerate(zip(text.splitlines(), mutated.splitlines()), 1) if a != b]
    assert changed == [15] and "        y[i] += x[i]" in mutated.splitlines()[14]
    with pytest.raises(AssertionError, match="no longer"):
        second.apply(text.replace("y[i] = x[i] * 2.0f;   // doubles: 3 * 4\n    }\n}", "y[i] = 0;\n    }\n}"))


def test_every_lib_c_source_belongs_to_one_family_and_every_family_has_mutants():
    for path in sorted((bench.LIBRARY / "sources").glob("*.[ch]")):
        owners = [f.name for f in bench.FAMILIES for glob in f.sources if fnmatch(path.name, glob)]
        assert len(owners) == 1, f"{path.name} belongs to {owners or 'no family'}: add it to one in FAMILIES"
    by_family = bench.all_mutants()
    assert {f.name for f in bench.FAMILIES} == {name for name, ms in by_family.items() if ms}


def test_every_family_names_entries_that_its_modules_have():
    for family in bench.FAMILIES:
        names = set()
        for module in family.modules:
            catalogue = __import__(f"harness.catalogue.{module}", fromlist=["ENTRIES"])
            names |= {e.name for e in catalogue.ENTRIES if isinstance(e, OpEntry)}
        pattern = re.compile(f"(?:{family.entries})")
        assert any(pattern.fullmatch(n) for n in names), f"{family.name}: no entry of {family.modules} matches"
        for alternative in family.entries.split("|"):
            assert alternative == ".*" or alternative in names, f"{family.name}: no entry {alternative!r}"
        training = {e.name for e in __import__("harness.catalogue.training", fromlist=["ENTRIES"]).ENTRIES}
        for run in filter(None, family.training.split("|")):
            assert run in training, f"{family.name}: no training run {run!r}"


def test_the_sample_reaches_every_family_and_follows_its_seed():
    by_family = bench.all_mutants()
    one = bench.stratified_sample(by_family, 160, seed=1)
    assert len(one) == 160 and len({m.key for m in one}) == 160
    assert {bench.family_of(m.file).name for m in one} == set(by_family)
    assert [m.key for m in bench.stratified_sample(by_family, 160, seed=1)] == [m.key for m in one]
    assert [m.key for m in bench.stratified_sample(by_family, 160, seed=2)] != [m.key for m in one]
    small = min(by_family, key=lambda n: len(by_family[n]))
    assert sum(bench.family_of(m.file).name == small for m in one) >= min(2, len(by_family[small]))


def test_the_reviewed_survivors_are_real_mutants_with_a_class_and_a_reason():
    reviews = bench.load_reviews()
    assert reviews, "bench/mutation_survivors.toml lists the reviewed survivors"
    stale = bench.stale_reviews(reviews, [m for ms in bench.all_mutants().values() for m in ms])
    assert not stale, f"reviews that no longer name their mutant: {stale}; review them again"
    for key, review in reviews.items():
        assert review.cls in bench.CLASSES and review.reason, key


def test_a_review_names_which_mutant_of_its_line_it_means(tmp_path):
    """The mutants of one line's literals differ only in their occurrence;
    the review's mutated line tells a review of the wrong one (session 45
    wrote occurrence 0 for the 4x2 tile set's mutant that was occurrence 3)."""
    path = tmp_path / "pulp_sets_fp32.c"
    path.write_text("void g(void)\n{\n    set(4, 2, 1);\n}\n")
    mutants = [m for m in mutants_of(path) if m.operator == "constant +1"]
    assert [(m.occurrence, m.mutated) for m in mutants] == [(0, "set(5, 2, 1);"), (1, "set(4, 3, 1);"),
                                                            (2, "set(4, 2, 2);")]
    meant = bench.Review("equivalent", "the last argument 1 -> 2", "set(4, 2, 2);")
    assert bench.stale_reviews({mutants[2].key: meant}, mutants) == {}
    assert bench.stale_reviews({mutants[0].key: meant}, mutants) == {
        mutants[0].key: "that key makes 'set(5, 2, 1);', the review is of 'set(4, 2, 2);'"}
    gone = ("pulp_sets_fp32.c", "constant +1", "set(4, 2, 0);", 0)
    assert "no such mutant" in bench.stale_reviews({gone: meant}, mutants)[gone]


def test_a_malformed_review_is_an_error_naming_it(tmp_path):
    path = tmp_path / "survivors.toml"
    path.write_text('[[survivor]]\nfile = "a.c"\noperator = "swap < <="\nline = "x;"\noccurrence = 0\n'
                    'class = "equivalent"\n')
    with pytest.raises(SystemExit, match="survivor 1: missing \\['mutated'\\]"):
        bench.load_reviews(path)
    path.write_text(path.read_text().replace('occurrence = 0\n', 'occurrence = 0\nmutated = "y;"\n'))
    with pytest.raises(SystemExit, match="survivor 1: a mutant reviewed equivalent needs its reason"):
        bench.load_reviews(path)
    path.write_text(path.read_text().replace('"equivalent"', '"lawful"'))
    with pytest.raises(SystemExit, match="survivor 1: a mutant reviewed lawful needs its reason \\(the API page's words"):
        bench.load_reviews(path)
    path.write_text(path.read_text().replace('"lawful"', '"harmless"'))
    with pytest.raises(SystemExit, match="class 'harmless'"):
        bench.load_reviews(path)


def test_the_kill_rate_leaves_out_equivalent_and_lawful_survivors_and_counts_unreviewed_as_gaps(source):
    mutants = mutants_of(source)[:6]
    family = bench.FAMILIES[0]
    outcomes = [bench.Outcome("killed", "slice", ["numeric"]), bench.Outcome("killed", "family", ["numeric"]),
                bench.Outcome("survived"), bench.Outcome("survived"), bench.Outcome("stillborn", "slice", ["build"]),
                bench.Outcome("survived")]
    reviews = {mutants[2].key: bench.Review("equivalent", "the branch assigns the value it already has",
                                            mutants[2].mutated)}
    text, killed, gaps = bench.summary(list(zip(mutants, [family] * 6, outcomes)), reviews)
    assert (killed, gaps) == (2, 2)
    assert "kill rate: 2 of 4 non-equivalent mutants (50.0%)" in text
    assert "1 equivalent, 1 stillborn" in text
    assert f"unreviewed {family.name:14} {mutants[3].id}" in text
    assert "the branch assigns the value it already has" in text

    # A change the page allows (another reading of its contract) is no bug either; it names its words.
    reviews[mutants[5].key] = bench.Review("lawful", "the page: 'adds into output (zero it first)'",
                                           mutants[5].mutated)
    text, killed, gaps = bench.summary(list(zip(mutants, [family] * 6, outcomes)), reviews)
    assert (killed, gaps) == (2, 1)
    assert "kill rate: 2 of 3 non-equivalent, non-lawful mutants (66.7%)" in text
    assert "1 equivalent, 1 lawful (the page allows what they change), 1 stillborn" in text
    assert f"lawful     {family.name:14} {mutants[5].id}" in text and "(zero it first)" in text


def test_runs_that_split_a_sample_combine_into_one_summary_and_a_mutant_twice_is_refused(tmp_path, capsys):
    everything = {m.id: m for ms in bench.all_mutants().values() for m in ms}
    mutants = sorted(everything.values(), key=lambda m: m.id)[:3]
    parts = [[(mutants[0], bench.Outcome("killed", "slice", ["numeric"])),
              (mutants[1], bench.Outcome("stillborn", "slice", ["build"]))],
             [(mutants[2], bench.Outcome("killed", "family", ["crash"]))]]
    paths = []
    for n, part in enumerate(parts):
        paths.append(tmp_path / f"part{n}.csv")
        bench.write_csv(paths[-1], [(m, bench.family_of(m.file), o) for m, o in part], {})
    assert bench.main(["--combine", *map(str, paths)]) == 0
    out = capsys.readouterr().out
    assert "3 mutants from 2 runs" in out and "kill rate: 2 of 2 non-equivalent mutants (100.0%)" in out
    with pytest.raises(SystemExit, match=f"more than one of the files: {mutants[0].id}"):
        bench.main(["--combine", str(paths[0]), str(paths[0])])


def test_a_kill_keeps_the_variant_and_the_message_that_made_it(tmp_path):
    """A kill's evidence (the first failed variant, its pass and its
    message's first line) survives the CSV, so that a kill that should not
    have happened (an equivalent mutant "killed" by a flaky run) can be told
    from a real one afterwards."""
    everything = {m.id: m for ms in bench.all_mutants().values() for m in ms}
    mutant = sorted(everything.values(), key=lambda m: m.id)[0]
    evidence = "residual-fp32-fw-n9-direct-c3 (free+address,undefined): [crash] runner stopped by signal 11"
    path = tmp_path / "run.csv"
    bench.write_csv(path, [(mutant, bench.family_of(mutant.file),
                            bench.Outcome("killed", "concurrency", ["crash"], 3, 1.0, "free+address,undefined",
                                          evidence))], {})
    ((_, _, outcome),) = bench.read_csv(path, everything)
    assert outcome.evidence == evidence and outcome.note == "free+address,undefined"


def test_family_chooses_every_site_of_the_family_once_and_an_unknown_name_is_refused():
    by_family = bench.all_mutants()
    args = bench.argparse.Namespace(only=None, reviewed=False, sample=160, seed=1,
                                    family=["elem_loops", "elem_loops"])
    chosen, what = bench.choose(args, by_family, {})
    assert chosen == by_family["elem_loops"] and what == f"{len(chosen)} chosen mutants"
    with pytest.raises(SystemExit, match="no family is called elem_loop; the families: act, "):
        bench.choose(bench.argparse.Namespace(only=None, reviewed=False, family=["elem_loop"]), by_family, {})


def test_the_perf_stage_runs_the_family_stage_cases_as_qemu_collects_them(tmp_path, monkeypatch):
    """The perf stage asks QEMU's collection (a case may exist on one target
    only), the host stages the host's; it runs the whole family, like the
    family stage, and the training runs that chain it."""
    def collected(self, module, target):
        rows = {"act": [f"suite/test_ops.py::test_op[relu-fp32-fw-n9-direct-c{c}]" for c in (1, 3, 8)],
                "training": ["suite/test_training.py::test_op[train_cnn-fp32-fw-tiny-direct-c8]"]}[module]
        return [row.replace("direct", target) for row in rows]
    monkeypatch.setattr(bench.Suite, "collected", collected)
    suite = bench.Suite(tmp_path, tmp_path, 30)
    assert suite.stages == ("slice", "family", "concurrency", "perf")
    act = next(f for f in bench.FAMILIES if f.name == "act")
    assert suite.selection(act, "slice", "pulp_act_fp32.c") == ["suite/test_ops.py::test_op[relu-fp32-fw-n9-host-c3]"]
    perf = suite.selection(act, "perf", "pulp_act_fp32.c")
    assert perf == [f"suite/test_ops.py::test_op[relu-fp32-fw-n9-qemu-c{c}]" for c in (1, 3, 8)] + \
        ["suite/test_training.py::test_op[train_cnn-fp32-fw-tiny-qemu-c8]"]
    assert [s.replace("host", "qemu") for s in suite.selection(act, "family", "pulp_act_fp32.c")] == perf
