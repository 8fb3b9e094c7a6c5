"""A fast first pass over many candidates: each one a plain program (module + test code) in a fork of one warm
process in the sandbox (`screen_runner.py`), instead of a pytest run each. Survivors are confirmed by the real
harness; the screen only filters."""
from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources
from typing import Any

from bot.agent.types import TestOutcome
from bot.fix.locate.spans import splice
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
        records = run_programs(self.sandbox, [self.program(s) for s in sources], timeout_s or self.timeout_s)
        return [TestOutcome(bool(r["passed"]), r.get("error", ""), bool(r.get("timed_out")),
                            float(r.get("seconds", 0.0))) for r in records]


def run_programs(sandbox: Sandbox, programs: Sequence[str], timeout: float) -> list[dict[str, Any]]:
    """Each program's record from `screen_runner.py` (passed, timed_out, error, seconds, result), in order, in
    CHUNKS sandbox jobs side by side."""
    if not programs:
        return []
    size = math.ceil(len(programs) / CHUNKS)
    chunks = [list(programs[i:i + size]) for i in range(0, len(programs), size)]
    jobs = [Job({RUNNER: runner_source(), "screen.json": json.dumps({"programs": chunk, "timeout": timeout})},
                ["python3", "-I", RUNNER], timeout=len(chunk) * (timeout + 1.0) + 10.0, collect=(RESULTS,))
            for chunk in chunks]
    records: list[dict[str, Any]] = []
    for chunk, result in zip(chunks, sandbox.run_batch(jobs)):
        lines = (result.files.get(RESULTS) or "").splitlines()
        for i in range(len(chunk)):
            try:
                records.append(json.loads(lines[i]))
            except (IndexError, ValueError):  # the runner itself died: nothing it ran passes
                records.append({"passed": False, "timed_out": result.timed_out, "error": "screen lost"})
    return records
