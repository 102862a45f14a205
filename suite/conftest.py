"""The suite's session start: build every format first and say what built
(harness/pytest_plugin.py, PtlPlugin.announce_builds). Here rather than in
the plugin, so a pytest run that holds no suite tests builds nothing."""


def pytest_sessionstart(session):
    session.config.pluginmanager.get_plugin("ptl-plugin").announce_builds()


def pytest_ignore_collect(collection_path, config):
    """The autotuner's pytest mode (test_autotune.py) runs only when asked: --tune NET.toml."""
    if collection_path.name == "test_autotune.py" and not config.getoption("tune"):
        return True
    return None
