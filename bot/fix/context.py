"""What one `fix` run carries from step to step: its run-time dependencies (the model, the sandbox, the Python
and the ways to rebuild the environment) and what it accumulates (the test runs, their seconds).

A mutable record, handed to each step; the steps may replace the sandbox (another environment is kept) and set
`by_module` (the suite runs a module at a time). Defined here, below the steps, so that every step sees it."""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from bot.environment.drift import Floor
from bot.fix.result import RunSummary
from bot.llm import LLM
from sandbox import Sandbox


@dataclass(frozen=True)
class EnvChange:
    """Another environment for the same checkout, whole: its Python, the date its releases were cut at, the pins
    held back; and which of them this change is about (`what`), for people."""

    python: str
    as_of: str | None = None
    hold_back: tuple[str, ...] = ()
    what: str = ""  # "Python 3.9", "nothing uploaded after 2020-01-01"

    def describe(self) -> str:
        return self.what


@dataclass
class FixRun:
    """Run-time dependencies and what one `fix` call accumulates."""

    llm: LLM
    sandbox: Sandbox
    pythonpath: Sequence[str] = ()
    setup_s: float = 0.0
    say: Callable[[str], None] = lambda message: None
    runs: list[RunSummary] = field(default_factory=list)
    tests_s: float = 0.0
    floors: tuple[Floor, ...] = ()  # dependencies installed above the project's lowest declared version
    rebuild: Callable[[tuple[str, ...]], Sandbox | None] | None = None  # a sandbox with those pins, or None
    python: str = ""  # the Python the tests run on; "" when unknown (no environment causes are read then)
    by_module: bool = False  # the suite does not finish as a whole: whole-suite runs go a module at a time
    commit_date: str | None = None  # the failing commit's date, when the checkout is a git repository
    as_of: str | None = None  # the environment's releases are those uploaded before this date
    # a sandbox on another environment (reproduce/env_retry.py) with the Python it runs, or None when it does not build
    rebuild_as: Callable[[EnvChange], tuple[Sandbox, str] | None] | None = None
    older: tuple[str, ...] = ()  # older Pythons fixbot has a sandbox base for, newest first
