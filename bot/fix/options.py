"""What a `fixbot fix` run is asked to do: the test command, the failures a CI log names, the budgets, the paths a
fix may change and the agent's options; one record, made by the CLI, the Action's configuration and the tests."""
from __future__ import annotations

from dataclasses import dataclass

from bot.agent import FIX_REPAIR, RepairOptions
from bot.failures import Failure
from bot.fix.reproduce.command import TestCommand


@dataclass(frozen=True)
class FixOptions:
    test_command: TestCommand = TestCommand()
    log_failures: tuple[Failure, ...] = ()  # from --from-log: only these are to be fixed
    max_targets: int = 4  # targets tried in all
    wall_s: float = 1800.0  # a hard limit: the run reports within it
    suite_timeout_s: float = 600.0  # a whole-suite run; the backstop, since every test has its own limit
    test_timeout_s: float | None = None  # per test; None: ten times the slowest passing test (reproduce/runs.py)
    paths: tuple[str, ...] = ("**/*.py",)  # files a fix may change (.github/fixbot.yml `paths`); tests never
    repair: RepairOptions = FIX_REPAIR  # the agent's design, iterations per target, answers per call, search
