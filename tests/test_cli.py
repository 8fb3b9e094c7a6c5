"""The command line as a user meets it: help that explains, one-line errors, no tracebacks."""
from __future__ import annotations

import subprocess
import sys

import pytest

from .conftest import REPO, run_fixbot


@pytest.mark.parametrize("args", [[], ["sandbox"], ["sandbox", "build"], ["sandbox", "run"], ["sandbox", "gc"],
                                  ["fix"], ["eval"], ["graph"]])
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


def test_the_command_line_loads_without_the_agent_graph():
    """langgraph (a second of imports) loads when a repair runs, not for `--help` or a command's bad input."""
    check = ("import sys, bot.cli.main, bot.agent, bot.fix.pipeline; "
             "print(sorted(m for m in sys.modules if m.split('.')[0] == 'langgraph'))")
    out = subprocess.run([sys.executable, "-c", check], capture_output=True, text=True, cwd=REPO, check=True)
    assert out.stdout.strip() == "[]"
    from bot.agent import repair  # and the package still hands out the graph's entry point when asked

    assert callable(repair)
