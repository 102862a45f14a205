"""The suite's session start: build every format first and say what built
(harness/pytest_plugin.py, PtlPlugin.announce_builds). Here rather than in
the plugin, so a pytest run that holds no suite tests builds nothing."""


def pytest_sessionstart(session):
    session.config.pluginmanager.get_plugin("ptl-plugin").announce_builds()
