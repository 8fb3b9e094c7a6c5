"""HumanEvalFix's tests as pytest tests, so the model reads pytest's rewritten assertion
(`assert True == False` and where True came from)."""
from __future__ import annotations

import re

from bot.harness import PytestHarness
from bot.screen import ScriptScreen
from sandbox import Sandbox

TIMEOUT_S = 10.0
CHECK_CALL = re.compile(r"^check\(\s*\w+\s*\)\s*$", re.M)


def test_module(test_code: str, entry_point: str) -> str:
    """The dataset's `check(candidate)` plus its trailing call, as a pytest test."""
    body = CHECK_CALL.sub("", test_code).strip()
    return (f"from solution import *  # noqa: F401,F403\nfrom solution import {entry_point}\n\n{body}\n\n\n"
            f"def test_check():\n    check({entry_point})\n")


def humaneval_harness(sandbox: Sandbox, module: str, entry_point: str, tests: str,
                      timeout_s: float = TIMEOUT_S) -> PytestHarness:
    """`tests` empty (some tasks have no example tests): nothing to run."""
    files = {"test_solution.py": test_module(tests, entry_point)} if tests.strip() else {}
    return PytestHarness(sandbox, "solution.py", module, entry_point, files, timeout_s)


def humaneval_screen(sandbox: Sandbox, module: str, entry_point: str, tests: str) -> ScriptScreen:
    """The search's fast first pass: the dataset's recipe (module, then the test code with its `check(...)` call)
    as one plain program per candidate."""
    return ScriptScreen(sandbox, module, entry_point, tests)
