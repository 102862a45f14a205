"""harness/runner_contract.py: the runner's own description of its ops lays
cases out, and a catalogue that disagrees with it is stopped with the names."""
import pytest

from harness.failures import BAD_CASE, CaseFailure
from harness.kernels import kernel_tables
from harness.runner_contract import RunnerContract

DESCRIPTION = [
    "op linear_fp32|in out use_bias step|x W b dy|y dW db dx|fp32",
    "op maxpool_fp32|C H W Hker Wker Hstride Wstride step|x dy|y dx|none",
    "kernels fp32|" + " ".join(kernel_tables()["fp32"]),
    "kernels fp16|" + " ".join(kernel_tables()["fp16"]),
]


@pytest.fixture
def contract():
    return RunnerContract.parse(DESCRIPTION)


def test_params_and_inputs_follow_the_runner_order_whatever_the_catalogue_order(contract):
    layout = contract.layout("linear_fp32", {"step": 1, "use_bias": 1, "out": 3, "in": 5},
                             {"dy": 0, "b": 0, "x": 0, "W": 0}, {"dW": 0, "db": 0},
                             kernel_tables()["fp32"], "where")
    assert layout.params == [5, 3, 1, 1]
    assert layout.input_names == ["x", "W", "b", "dy"]
    assert layout.output_names.index("db") == 2  # the tensor index the op emits db under


def test_a_param_name_the_runner_does_not_know_is_a_bad_case_naming_both_sides(contract):
    with pytest.raises(CaseFailure) as info:
        contract.layout("maxpool_fp32", {"C": 1, "H": 2, "W": 2, "Hk": 1, "Wker": 1, "Hstride": 1, "Wstride": 1,
                                         "step": 0}, {"x": 0, "dy": 0}, {"y": 0}, ("direct",), "case: X")
    assert info.value.kind == BAD_CASE
    assert "(missing ['Hker'])" in info.value.message and "(unknown ['Hk'])" in info.value.message
    assert "case: X" in info.value.message


def test_an_output_the_op_never_emits_and_a_wrong_kernel_table_are_reported(contract):
    with pytest.raises(CaseFailure) as info:
        contract.layout("linear_fp32", {"in": 1, "out": 1, "use_bias": 0, "step": 0},
                        {"x": 0, "W": 0, "b": 0, "dy": 0}, {"out": 0}, kernel_tables()["fp16"], "w")
    assert "the reference has ['out']" in info.value.message
    assert "indexes the fp32 table" in info.value.message


def test_an_unreadable_description_line_is_refused():
    with pytest.raises(ValueError, match="unreadable DESCRIBE record"):
        RunnerContract.parse(["op broken|only two"])


def test_save_and_load_round_trip(tmp_path, contract):
    contract.save(tmp_path)
    loaded = RunnerContract.load(tmp_path)
    assert loaded.ops == contract.ops and loaded.kernel_tables == contract.kernel_tables
