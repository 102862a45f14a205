"""The autotuner's pytest mode (suite/test_autotune.py): its options and
their checks, registered by the pytest plugin."""
from __future__ import annotations

from pathlib import Path
from typing import Callable

import pytest

from harness import option_values
from harness.autotune.strategies import STRATEGIES
from harness.dtypes import DTYPES


def add_options(parser) -> None:
    tune = parser.getgroup("ptl-tune", "autotuner as a pytest mode (suite/test_autotune.py)")
    tune.addoption("--tune", default=None, metavar="NET.toml",
                   help="tune a network's layers: one test per layer and step (run in one process: -n 0)")
    tune.addoption("--tune-strategy", default="exhaustive", help=" or ".join(STRATEGIES))
    tune.addoption("--tune-tiles", default=None, help="candidate tilings per method (default 8)")
    tune.addoption("--tune-cores", default=None, help="comma-separated core counts (default: the target's maximum)")
    tune.addoption("--tune-dtype", default="fp32", choices=DTYPES)


def check_options(config, module: Path, max_cores: Callable[[], int]) -> None:
    """One usage error for a bad tuner option, or for the tuner's module
    asked for without --tune; --tune-tiles replaced by its value."""
    def bad(option: str, value, allowed: str):
        raise pytest.UsageError(f"{option_values.label(option, value)}: {allowed}")

    here = config.invocation_params.dir
    if any((here / arg.split("::")[0]).resolve() == module for arg in config.args) and not config.getoption("tune"):
        bad("--tune", "missing", "suite/test_autotune.py is the autotuner's pytest mode: give it a network, "
                                 "--tune NET.toml (e.g. networks/ds_cnn.toml), and -n 0")
    try:
        tiles = config.option.tune_tiles
        config.option.tune_tiles = option_values.number("--tune-tiles", 8 if tiles is None else tiles,
                                                        "a whole number of at least 1", integer=True, minimum=1)
        if not config.getoption("tune"):
            return
        if config.getoption("numprocesses", None):
            bad("--tune", config.getoption("tune"), "the tuner keeps its state in one process: add -n 0")
        if config.getoption("tune_strategy") not in STRATEGIES:
            bad("--tune-strategy", config.getoption("tune_strategy"), f"choose one of {', '.join(STRATEGIES)}")
        option_values.core_counts("--tune-cores", config.getoption("tune_cores"), max_cores())
    except option_values.OptionValueError as exc:
        raise pytest.UsageError(str(exc)) from None
