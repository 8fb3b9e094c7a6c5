"""The command line as a user meets it: help that explains, one-line errors, no tracebacks."""
from __future__ import annotations

import pytest

from .conftest import run_fixbot


@pytest.mark.parametrize("args", [[], ["sandbox"], ["sandbox", "build"], ["sandbox", "run"], ["sandbox", "gc"],
                                  ["demo"]])
def test_help_explains_every_command(args):
    result = run_fixbot(*args, "--help")
    assert result.returncode == 0 and result.stdout.startswith("usage: fixbot")


def test_unknown_command_is_a_usage_error():
    result = run_fixbot("frobnicate")
    assert result.returncode == 2 and "invalid choice" in result.stderr and "Traceback" not in result.stderr


def test_run_without_command_is_one_line():
    result = run_fixbot("sandbox", "run")
    assert result.returncode == 2 and result.stderr.strip() == \
        "fixbot: error: no command given: fixbot sandbox run [--file F] -- python3 F"


@pytest.mark.model
@pytest.mark.timeout(900)
def test_demo_repairs_the_module_with_the_bundled_model(sandbox_image):
    """The README's main job: red tests, the agent's repair with the bundled model, the minimal diff."""
    result = run_fixbot("demo", timeout=900)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "E   assert 2.0 == 4" in result.stdout and "green: the tests pass" in result.stdout
    assert "-    return total / (len(xs) + 1)\n+    return total / len(xs)" in result.stdout
