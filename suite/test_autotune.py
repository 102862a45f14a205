"""The autotuner as a pytest mode, one test per layer and step:

    pytest suite/test_autotune.py --tune networks/ds_cnn.toml -n 0 [--target qemu]
        [--tune-strategy greedy] [--tune-tiles 8] [--tune-cores 1,8] [--tune-dtype fp32]

A test passes with the best configuration and its timings as properties
(pytest's --junitxml carries them), and fails when no configuration is
correct or none fits the L1. At the end the same reports as
`python -m harness autotune` go to <--reports-dir>/autotune/. Without
--tune this module is not collected (suite/conftest.py).
"""
from __future__ import annotations

import time
from pathlib import Path

import pytest

from harness import cache_layout
from harness.autotune.cli import check_work, open_tuning, tuning_meta
from harness.autotune.layers import Network, NetworkError, load_network
from harness.autotune.outputs import best_record, why_not, write_all
from harness.autotune.strategies import make_strategy
from harness.autotune.tiler import LayerTooLarge
from harness.autotune.tuner import tune
from harness.option_values import core_counts


def _network(config) -> Network:
    return load_network(Path(config.getoption("tune")))


def _cores(config) -> tuple[int, ...]:
    target = config.pluginmanager.get_plugin("ptl-plugin").target
    return core_counts("--tune-cores", config.getoption("tune_cores"), target.capabilities.max_cores)


def pytest_generate_tests(metafunc):
    if "layer_step" in metafunc.fixturenames:
        # Everything the tuning needs is checked here, once: a bad value is one
        # collection error with its message, not an error in every test.
        try:
            network = _network(metafunc.config)
            check_work(network, [], (), metafunc.config.getoption("tune_dtype"))
            _cores(metafunc.config)
        except (NetworkError, ValueError, LayerTooLarge) as exc:
            raise pytest.Collector.CollectError(str(exc)) from None
        pairs = [(layer, step) for layer in network.layers for step in layer.steps]
        metafunc.parametrize("layer_step", pairs, ids=[f"{network.name}.{l.name}.{s}" for l, s in pairs])


class Tuning:
    def __init__(self, config):
        plugin = config.pluginmanager.get_plugin("ptl-plugin")
        self.config, self.network, self.target = config, _network(config), plugin.target
        caps = self.target.capabilities
        self.cores = _cores(config)     # checked at collection
        self.l1 = config.getoption("l1_bytes") or caps.l1_bytes or 64 * 1024
        cache = config.getoption("ptl_cache") or cache_layout.default_root()
        self.library = Path(config.getoption("trainlib"))
        self.session, self.db, self.evaluator = open_tuning(self.target, self.library, Path(cache),
                                                            config.getoption("run_timeout"), self.l1, self.cores)
        self.strategy = make_strategy(config.getoption("tune_strategy"))
        self.dtype, self.tiles = config.getoption("tune_dtype"), config.getoption("tune_tiles")
        self.results, self.started = [], time.monotonic()

    def step(self, layer, step):
        one = Network(self.network.name, (layer,), self.network.source)
        result = tune(one, self.evaluator, self.strategy, self.dtype, self.l1, self.tiles, (step,))[0]
        self.results.append(result)
        return result

    def write(self) -> None:
        meta = tuning_meta(self.network, self.target, self.dtype, self.cores, self.l1,
                           self.config.getoption("tune_strategy"), self.tiles, self.library,
                           self.session.scope_for(self.dtype).library, self.session.runs, self.evaluator.reused,
                           time.monotonic() - self.started, self.evaluator.cost)
        _, notes = write_all(self.results, meta, Path(self.config.getoption("reports_dir")) / "autotune",
                             self.network)
        reporter = self.config.pluginmanager.get_plugin("terminalreporter")
        for note in notes:
            if reporter:
                reporter.write_line(f"autotune: {note}")


@pytest.fixture(scope="session")
def tuning(request):
    plugin = request.config.pluginmanager.get_plugin("ptl-plugin")
    if plugin.unavailable:
        pytest.fail(f"[load] target {plugin.target.name} is not available: {plugin.unavailable}", pytrace=False)
    tuning = Tuning(request.config)
    yield tuning
    if tuning.results:
        tuning.write()


def test_autotune(layer_step, tuning, record_property):
    layer, step = layer_step
    result = tuning.step(layer, step)
    record = best_record(result)
    for key, value in record.items():
        if key not in ("pieces", "error", "macros"):
            record_property(key, value)
    if result.best is None:
        pytest.fail(why_not(result), pytrace=False)
