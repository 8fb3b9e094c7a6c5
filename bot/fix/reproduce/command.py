"""The user's test command as fixbot reads it: `pytest ...`, `python -m pytest ...` or `python -m unittest ...`,
with the `NAME=value` words before it (command_env.py); a unittest command's names become pytest's node ids once the
checkout's files are known (unittest_cmd.py).

In: the command's text. Out: a `TestCommand`, or BadTestCommand with a one-line reason. Never: a command that is
not pytest or unittest (fixbot always runs pytest, with its own plugin)."""
from __future__ import annotations

import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from bot.fix.reproduce.command_env import BadTestCommand, split_assignments
from bot.fix.reproduce.unittest_cmd import UNITTEST_PREFIXES, parse_unittest, pytest_args

__all__ = ["BadTestCommand", "PYTEST_PREFIXES", "TestCommand"]
PYTEST_PREFIXES = (("pytest",), ("py.test",), ("python", "-m", "pytest"), ("python3", "-m", "pytest"))


@dataclass(frozen=True)
class TestCommand:
    """The user's test command: pytest's arguments (what follows `pytest`; `kind` "pytest"), or the arguments of
    `python -m unittest` (`kind` "unittest"), which `pytest_args` translates once the checkout's files are known
    (unittest_cmd.py). fixbot always runs pytest, adding its own flags."""

    __test__ = False

    args: tuple[str, ...] = ()
    kind: str = "pytest"  # or "unittest"
    launcher: tuple[str, ...] = ("pytest",)  # the words before `args` as the user wrote them (shown by str)
    env: tuple[tuple[str, str], ...] = ()  # `NAME=value` before the command (command_env.py)

    @classmethod
    def parse(cls, text: str | None) -> TestCommand:
        if not text or not text.strip():
            return cls()
        try:
            env, words = split_assignments(shlex.split(text))
        except ValueError as exc:
            raise BadTestCommand(f"--test-cmd {text!r}: {exc}") from None
        for prefix in PYTEST_PREFIXES:
            if words[:len(prefix)] == prefix:
                return cls(words[len(prefix):], env=env)
        for prefix in UNITTEST_PREFIXES:
            if words[:len(prefix)] == prefix:
                parse_unittest(words[len(prefix):], text)  # unittest's usage errors are refused before any run
                return cls(words[len(prefix):], "unittest", prefix, env)
        raise BadTestCommand(f"--test-cmd {text!r}: fixbot runs pytest; give a command that starts with `pytest`, "
                             "`python -m pytest` or `python -m unittest`, followed by its arguments")

    def pytest_args(self, files: Mapping[str, bytes], *, pythonpath: Sequence[str] = ()) -> tuple[str, ...]:
        """The arguments to give pytest over the checkout's `files`: a pytest command's as they are; a unittest
        command's names resolved to node ids and directories (UnknownTestName when one names nothing there)."""
        if self.kind != "unittest":
            return self.args
        return pytest_args(parse_unittest(self.args, str(self)), files, pythonpath=pythonpath)

    def __str__(self) -> str:
        return shlex.join((*(f"{name}={value}" for name, value in self.env), *self.launcher, *self.args))
