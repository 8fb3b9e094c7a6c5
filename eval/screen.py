"""A fast first pass over many candidates: each one a plain program (module + test code) in a fork of one warm
process in the sandbox (`screen_runner.py`), instead of a pytest run each. Survivors are confirmed by the real
harness; the screen only filters."""
from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources

from bot.agent.types import TestOutcome
from bot.fix.spans import splice
from sandbox import Job, Sandbox

RUNNER = "screen_runner.py"
RESULTS = "screen-results.jsonl"
CHUNKS = 2  # one per sandbox worker: the pool runs them side by side


def runner_source() -> str:
    return resources.files("eval").joinpath(RUNNER).read_text(encoding="utf-8")


@dataclass(frozen=True)
class ScriptScreen:
    """Screens candidates for one function against test code that runs after the module in the same program
    (HumanEvalFix's `check(candidate)` and its call)."""

    sandbox: Sandbox
    module: str
    function: str
    tests: str
    timeout_s: float = 0.1  # per candidate: mutants that loop are common and must be cheap (the search gives
    # those that timed out a second, longer chance when nothing else passed)

    def program(self, function_source: str) -> str:
        return f"{splice(self.module, self.function, function_source)}\n{self.tests}\n"

    def screen(self, sources: Sequence[str], timeout_s: float | None = None) -> list[TestOutcome]:
        if not sources:
            return []
        timeout = timeout_s or self.timeout_s
        size = math.ceil(len(sources) / CHUNKS)
        chunks = [list(sources[i:i + size]) for i in range(0, len(sources), size)]
        jobs = [Job({RUNNER: runner_source(),
                     "screen.json": json.dumps({"programs": [self.program(s) for s in chunk],
                                                "timeout": timeout})},
                    ["python3", "-I", RUNNER], timeout=len(chunk) * (timeout + 1.0) + 10.0,
                    collect=(RESULTS,))
                for chunk in chunks]
        outcomes: list[TestOutcome] = []
        for chunk, result in zip(chunks, self.sandbox.run_batch(jobs)):
            lines = (result.files.get(RESULTS) or "").splitlines()
            for i in range(len(chunk)):
                try:
                    record = json.loads(lines[i])
                except (IndexError, ValueError):  # the runner itself died: nothing screened passes
                    record = {"passed": False, "timed_out": result.timed_out, "error": "screen lost"}
                outcomes.append(TestOutcome(bool(record["passed"]), record.get("error", ""),
                                            bool(record.get("timed_out")), float(record.get("seconds", 0.0))))
        return outcomes
