"""One record per task, appended to results.jsonl as it goes, and read back to resume a run."""
from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

from bot.agent.types import FixedBy, StopReason
from bot.errors import UserError

TaskStop = StopReason | Literal["error"]  # "error": the task's run failed (its `error` says how)


@dataclass(frozen=True, kw_only=True)
class TaskResult:
    task_id: str
    bug_type: str
    passed: bool  # judged by the full (hidden) tests
    visible_passed: bool  # what the agent saw: its own tests passed
    iterations: int
    stop_reason: TaskStop
    prompt_tokens: int
    completion_tokens: int
    wall_s: float
    changed_lines: int | None
    final_code: str | None
    diff: str
    attempts: list[dict[str, Any]] = field(default_factory=list)
    error: str | None = None
    searches: list[dict[str, Any]] = field(default_factory=list)  # mutation search rounds (--search)
    fixed_by: FixedBy | None = None  # when the visible tests passed
    selection: dict[str, Any] | None = None  # how the fix was chosen by vote (examples protocol: choose/select.py)

    @property
    def solved_at(self) -> int | None:
        """The iteration budget that was enough, or None."""
        return self.iterations if self.passed else None


RUN_KEYS = ("model", "protocol", "iterations", "schedule", "data", "search", "agent", "few_shot", "samples",
            "task_seconds", "vote", "edits")
# what a run.json written before these keys existed meant
RUN_DEFAULTS = {"agent": "reflect", "few_shot": False, "samples": 1, "task_seconds": 600.0, "vote": False,
                "edits": "whole"}


class ResultsFile:
    """results.jsonl plus run.json (the configuration that produced it: a resumed run must match)."""

    def __init__(self, out: Path, run: dict[str, Any]):
        self.path = out / "results.jsonl"
        self.run_path = out / "run.json"
        out.mkdir(parents=True, exist_ok=True)
        if self.run_path.exists():
            before = json.loads(self.run_path.read_text())
            diff = [k for k in RUN_KEYS if before.get(k, RUN_DEFAULTS.get(k)) != run.get(k, RUN_DEFAULTS.get(k))]
            if diff:
                raise UserError(f"{out} holds results of another configuration ({', '.join(diff)} differ): "
                                "choose another --out, or delete it to start over")
        else:
            self.run_path.write_text(json.dumps(run, indent=2) + "\n")

    def load(self) -> dict[str, TaskResult]:
        """Finished tasks; a record with an error, or a line cut by a crash, is run again."""
        done: dict[str, TaskResult] = {}
        if not self.path.exists():
            return done
        for line in self.path.read_text().splitlines():
            try:
                record = TaskResult(**json.loads(line))
            except (ValueError, TypeError):
                continue
            if record.error is None:
                done[record.task_id] = record
            else:
                done.pop(record.task_id, None)
        return done

    def append(self, result: TaskResult) -> None:
        with self.path.open("a") as f:
            f.write(json.dumps(asdict(result)) + "\n")
            f.flush()
            os.fsync(f.fileno())
