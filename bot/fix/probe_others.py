"""Other plugins' settings that would hide the tests from fixbot's probe, turned off for fixbot's runs only.

A project's `addopts = -n auto` (pytest-xdist) runs the tests in worker processes: the probe in the main process
would see no test run, no coverage, no time limit, and the forked variants could not run. The tests run in the
one process instead, as `-n 0` would run them; their outcomes are the same. A project's `--cov` (pytest-cov) starts
a second coverage.py beside the probe's per-test one, and the two fail pytest with an INTERNALERROR when they stop:
the project's coverage report is not what fixbot runs the tests for, so pytest-cov does not start.

Shipped beside the probe as `fixbot_probe_others` (loaded through its `pytest_plugins`); standard library and
pytest only, inside the sandbox's Python (3.9+).
"""
import pytest

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
