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


@pytest.mark.parametrize("verbose", [False, True])
def test_logging_shows_fixbots_messages_and_other_libraries_only_when_they_warn(verbose):
    """matplotlib announcing its font cache at INFO reached `fixbot eval`'s output as a line of fixbot's own."""
    emit = (f"import logging; from bot.cli.main import configure_logging; configure_logging({verbose}); "
            "logging.getLogger('matplotlib.font_manager').info('font cache'); "
            "logging.getLogger('matplotlib').warning('a warning'); "
            "logging.getLogger('urllib3.connectionpool').debug('chatter'); "
            "logging.getLogger('bot.fix.pipeline').info('own info'); "
            "logging.getLogger('fixbot.sandbox').debug('own debug')")
    err = subprocess.run([sys.executable, "-c", emit], capture_output=True, text=True, cwd=REPO, check=True).stderr
    shown = ["font cache", "a warning", "own info", "own debug"] if verbose else ["a warning", "own info"]
    assert err.splitlines() == [f"fixbot: {line}" for line in shown]  # --verbose: all but the HTTP chatter
