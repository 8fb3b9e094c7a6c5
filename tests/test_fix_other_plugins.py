"""Plugins a project configures that would hide its tests from fixbot's probe (bot/inside/probe_others.py), in an
environment built with them as the project's CI would: pytest-xdist's `-n` and pytest-cov's `--cov` in addopts."""
from __future__ import annotations

import pytest

from bot.fix.reproduce.command import TestCommand
from bot.fix.reproduce.testrun import run_tests
from sandbox import open_sandbox

from .test_fix_environment import built, checkout, unique, versions  # noqa: F401 (built: a fixture)

pytestmark = pytest.mark.timeout(900)

CALC = ("def _scaled(values):\n    return [v * 3 for v in values]\n\n\n"  # the bug: 3 for 2, outside any traceback
        "def mean(values):\n    return sum(_scaled(values)) / len(values) / 2\n\n\n"
        "def total(values):\n    return sum(values)\n")
TESTS = ("from calc import mean, total\n\n\ndef test_mean():\n    assert mean([1, 2, 3]) == 2\n\n\n"
         "def test_total():\n    assert total([1, 2, 3]) == 6\n")


def test_xdist_and_pytest_cov_in_addopts_leave_fixbot_its_tests_and_their_coverage(built):
    project = checkout({"calc.py": CALC, "tests/test_calc.py": TESTS, "conftest.py": unique(),
                        "requirements-dev.txt": "pytest-xdist\npytest-cov\n",
                        "pytest.ini": "[pytest]\naddopts = -n 2 --cov=calc --cov-fail-under=100\n"})
    env = built(project)
    assert set(versions(env.image, "pytest-xdist", "pytest-cov")) == {"pytest-xdist", "pytest-cov"}
    failing, passing = "tests/test_calc.py::test_mean", "tests/test_calc.py::test_total"
    with open_sandbox("docker", image=env.image, pool_size=1) as sb:
        run = run_tests(sb, project.files, TestCommand(), pythonpath=env.pythonpath, coverage=True)
        again = run_tests(sb, project.files, TestCommand(), pythonpath=env.pythonpath, select=[failing])
    # without probe_others: xdist's workers ran the tests unseen (0 passed), or the two coverages ended pytest
    # with an INTERNALERROR
    assert run.failed == {failing} and run.passed == {passing}, run.output
    assert "INTERNALERROR" not in run.output and set(run.durations) == {failing, passing}
    assert run.coverage is not None and run.coverage["calc.py"][2] == {failing}  # the helper, by the failing test
    assert again.failed == {failing} and not again.passed, again.output
