"""Other plugins' settings that would hide the tests from fixbot's probe, turned off for fixbot's runs only.

A project's `addopts = -n auto` (pytest-xdist) runs the tests in worker processes: the probe in the main process
would see no test run, no coverage, no time limit, and the forked variants could not run. The tests run in the
one process instead, as `-n 0` would run them; their outcomes are the same. A project's `--cov` (pytest-cov) starts
a second coverage.py beside the probe's per-test one, and the two fail pytest with an INTERNALERROR when they stop:
the project's coverage report is not what fixbot runs the tests for, so pytest-cov does not start. A third-party
pytest plugin that does not even import on this Python (an old release the project pins) would stop pytest before
any test: it is left out, and a line on stderr says so (bot/fix/reproduce/classify.py reads it as the environment's).

Shipped beside the probe as `fixbot_probe_others` (loaded through its `pytest_plugins`); standard library and
pytest only, inside the sandbox's Python (3.9+).

PYTEST_DONT_REWRITE: probe.py imports this module before pytest loads it as a plugin; pytest's warning that it
cannot rewrite it would fail a project that turns every warning into an error.
"""
import sys

import pytest

BROKEN_PLUGIN = "fixbot: the pytest plugin %s does not load here (%s: %s); the tests run without it"
_ONE_PROCESS = {"numprocesses": 0, "dist": "no", "tx": [], "distload": False, "looponfail": False}


@pytest.hookimpl(tryfirst=True)
def pytest_cmdline_main(config):
    """xdist turns `-n` into `dist` and `tx` in its own tryfirst hook: whichever of the two runs first, these
    values leave it nothing to distribute (xdist's `_is_distribution_mode`)."""
    for name, value in _ONE_PROCESS.items():
        if hasattr(config.option, name):
            setattr(config.option, name, value)


@pytest.hookimpl(hookwrapper=True)
def pytest_load_initial_conftests(early_config, parser, args):
    """pytest-cov starts its coverage in this hook when `--cov` is given; a wrapper runs before every plugin's."""
    if getattr(early_config.known_args_namespace, "cov_source", None):
        early_config.known_args_namespace.cov_source = None
    yield


def _tolerate_broken_plugins():
    """pytest loads the installed plugins' entry points after the `-p` plugins (this one among them): each is
    loaded on its own, so that one that raises is left out instead of ending pytest."""
    try:
        from importlib import metadata

        import pluggy
    except ImportError:
        return
    original = pluggy.PluginManager.load_setuptools_entrypoints
    if getattr(original, "fixbot", False):
        return

    def load(self, group, name=None):
        if name is not None:
            return original(self, group, name)
        names = sorted({ep.name for dist in metadata.distributions() for ep in (dist.entry_points or ())
                        if ep.group == group})
        count = 0
        for each in names:
            try:
                count += original(self, group, each)
            except Exception as exc:  # a plugin that does not import: left out, and said
                message = " ".join(str(exc).split())[:200]
                sys.stderr.write(BROKEN_PLUGIN % (each, type(exc).__name__, message) + "\n")
        return count

    load.fixbot = True
    pluggy.PluginManager.load_setuptools_entrypoints = load


_tolerate_broken_plugins()


def leave_lingerers(exitstatus):
    """Tests that leave a child process (multiprocessing's, which Python joins at exit) or a non-daemon thread
    running would keep the finished run from ever ending: the probe has written everything, so the process ends
    here, with pytest's exit status."""
    import multiprocessing
    import os
    import threading

    threads = [t for t in threading.enumerate() if t is not threading.main_thread() and not t.daemon]
    if not threads and not multiprocessing.active_children():
        return
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(exitstatus)
