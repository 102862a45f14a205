"""scripts/library_table.py: the README's table of a library run counts
each variant in exactly one column; lib_c's own kernels that the library
lacks are `absent`, not new failures."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parent.parent / "scripts" / "library_table.py"

ROWS = """test_id,outcome,failure_class,family,dtype,expectation,message
a,passed,,matmul,fp32,,
b,skipped,absent,matmul,fp32,,mm_unroll_5x5 is absent
c,skipped,not_fit,matmul,fp16,,fp16 is bfloat16
d,xfailed,numeric,matmul,fp32,known_bug,wrong
e,xfailed,unsupported,matmul,fp32,unsupported,no field
f,failed,numeric,matmul,fp32,,wrong
g,failed,build,rnn,fp32,,build | pulp_rnn_fp32.c does not compile
"""


def table(tmp_path: Path) -> dict[tuple[str, str], dict[str, str]]:
    (tmp_path / "results.csv").write_text(ROWS)
    out = subprocess.run([sys.executable, str(SCRIPT), str(tmp_path / "results.csv")], capture_output=True,
                         text=True, check=True).stdout.splitlines()
    header = [h.strip() for h in out[0].strip("|").split("|")]
    return {(cells[0], cells[1]): dict(zip(header, cells))
            for cells in ([c.strip() for c in line.strip("|").split("|")] for line in out[2:])}


def test_each_variant_is_counted_once_and_absent_kernels_are_not_new_failures(tmp_path):
    rows = table(tmp_path)
    fp32 = rows["matmul", "fp32"]
    assert (fp32["variants"], fp32["passed"], fp32["known_bug"], fp32["unsupported"], fp32["absent"], fp32["new"]) == \
        ("5", "1", "1", "1", "1", "1")
    assert rows["matmul", "fp16"]["not_fit"] == "1"
    assert rows["rnn", "fp32"]["not built because"] == "pulp_rnn_fp32.c does not compile"
    everything = rows["**all**", ""]
    assert everything["variants"] == "**7**" and everything["new"] == "**2**"


def test_a_file_that_is_not_a_results_csv_is_one_error(tmp_path):
    (tmp_path / "x.csv").write_text("a,b\n1,2\n")
    result = subprocess.run([sys.executable, str(SCRIPT), str(tmp_path / "x.csv")], capture_output=True, text=True)
    assert result.returncode == 2 and "has no result rows" in result.stderr and "Traceback" not in result.stderr
