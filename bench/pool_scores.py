"""The choice among fixes, measured apart from the run that found them: for the tasks an examples leg got wrong
although a fix passed the examples (overfit), which candidates that pass the examples also pass the hidden tests,
and how candidate-level scores would have chosen among them.

    .venv/bin/python bench/pool_scores.py RESULTS.jsonl [--data FILE] [--tasks LIST] [--mutants 32] [--no-model]
        [--json]

A task's pool is every distinct answer its run recorded as passing the examples, and the one-edit mutants of the
buggy function that pass them (the mutation search with up to --mutants confirmed). Each candidate is run on the
hidden tests (here only, to score the scores: fixbot never sees them). Where a pool holds right and wrong
candidates, the model (the bundled GGUF) scores each, as in Coder-Reviewer
reranking: the coder score, the log-probability of the function's body given its docstring and `def` line (also
per token), the reviewer score, the log-probability of the docstring given the function without it, and their sum
(Coder-Reviewer; whole, and each per token). The summary counts the tasks whose pool holds a right candidate, those
whose pool holds right and wrong ones, and among these, those where each score's best candidate and the fewest
changed lines pick a right one. A line per task is printed as it ends.
"""
from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bot.agent.choose.likelihood import coder_text  # noqa: E402
from bot.agent.search.rounds import SearchOptions, search  # noqa: E402
from bot.agent.source.code import changed_lines, code_hash, split_docstring  # noqa: E402
from bot.agent.types import Target  # noqa: E402
from bot.errors import UserError  # noqa: E402
from bot.llm import open_llm  # noqa: E402
from eval.harness import humaneval_harness, humaneval_screen  # noqa: E402
from eval.replay import target_of, visible_tests  # noqa: E402
from eval.tasks import Task, load_tasks, parse_task_list  # noqa: E402
from sandbox import Sandbox, open_sandbox  # noqa: E402

DEFAULT_DATA = REPO.parent / "shared" / "data" / "humanevalpack-python.jsonl"


@dataclass(frozen=True, kw_only=True)
class Scored:
    code_hash: str
    source: str  # "answer" or "mutant"
    right: bool  # passes the hidden tests
    changed: int
    coder: float | None = None  # log-probability of the body, given the docstring and the `def` line
    coder_per_token: float | None = None
    reviewer: float | None = None  # log-probability of the docstring, given the code
    reviewer_per_token: float | None = None  # per docstring token (the same count for every candidate of a task)


class Scorer:
    """The bundled model, for the log-probability of a text after a prefix (bot/llm/llamacpp_score.py)."""

    def __init__(self) -> None:
        from bot.llm.llamacpp_backend import LlamaCppLLM

        llm = open_llm("llamacpp:bundled", progress=False)
        assert isinstance(llm, LlamaCppLLM)
        self.llm = llm

    def scores(self, code: str, doc: str) -> tuple[float, float, float, float]:
        """The coder score (the one fixbot's vote uses: bot/agent/choose/likelihood.py), it per body token, the
        reviewer score, and it per docstring token."""
        prefix, text = coder_text(code, doc)
        (coder,) = self.llm.logprobs(prefix, [text])
        body = split_docstring(code)[0].strip()
        said = f"{doc.strip()}\n\"\"\""
        (reviewer,) = self.llm.logprobs(f"```python\n{body}\n```\nA docstring for the function above:\n\"\"\"",
                                        [said])
        return (coder, coder / max(self.llm.count_tokens(text), 1), reviewer,
                reviewer / max(self.llm.count_tokens(said), 1))


def pool_of(task: Task, target: Target, row: dict[str, Any], sandbox: Sandbox, mutants: int
            ) -> dict[str, tuple[str, str]]:
    """code hash -> (code, where it came from), answers first."""
    pool = {code_hash(a["code"]): (a["code"], "answer") for a in row["attempts"]
            if a["outcome"] == "passed" and a.get("code")}
    shown = visible_tests(task, "examples")
    visible = humaneval_harness(sandbox, task.buggy_module, task.entry_point, shown)
    before = visible.check(target.source)
    if not before.passed:
        found, _ = search(target.source, target.source, task.entry_point, before.feedback, visible,
                          humaneval_screen(sandbox, task.buggy_module, task.entry_point, shown),
                          SearchOptions(confirm=mutants, second_order=0), "the original",
                          frozenset({code_hash(target.source)}))
        for code in found:
            pool.setdefault(code_hash(code), (code, "mutant"))
    return pool


def score_task(task: Task, row: dict[str, Any], sandbox: Sandbox, mutants: int, scorer: Scorer | None
               ) -> list[Scored]:
    target = target_of(task)
    pool = pool_of(task, target, row, sandbox, mutants)
    codes = [code for code, _ in pool.values()]
    hidden = humaneval_harness(sandbox, task.buggy_module, task.entry_point, task.test)
    verdicts = hidden.check_many(codes) if codes else []
    original, doc = target.source, split_docstring(target.source)[1]
    mixed = len({v.passed for v in verdicts}) == 2  # scores matter only where right and wrong are both there
    scored = []
    for (h, (code, where)), verdict in zip(pool.items(), verdicts):
        coder, per_token, reviewer, reviewer_per_token = (
            scorer.scores(code, doc) if scorer and mixed else (None, None, None, None))
        scored.append(Scored(code_hash=h[:8], source=where, right=verdict.passed,
                             changed=changed_lines(original, code), coder=coder, coder_per_token=per_token,
                             reviewer=reviewer, reviewer_per_token=reviewer_per_token))
    return scored


def picks(scored: list[Scored]) -> dict[str, bool]:
    """Whether each way of choosing picks a right candidate (the first on a tie)."""
    ways: dict[str, Any] = {"fewest changed lines": lambda s: s.changed}
    if scored and scored[0].coder is not None:
        ways |= {"coder": lambda s: -(s.coder or 0.0), "coder per token": lambda s: -(s.coder_per_token or 0.0),
                 "reviewer": lambda s: -(s.reviewer or 0.0),
                 # Coder-Reviewer reranking: the product of the two probabilities, whole and per token
                 "coder-reviewer": lambda s: -((s.coder or 0.0) + (s.reviewer or 0.0)),
                 "coder-reviewer per token":
                     lambda s: -((s.coder_per_token or 0.0) + (s.reviewer_per_token or 0.0))}
    return {name: min(scored, key=key).right for name, key in ways.items()} if scored else {}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("results", type=Path, help="an examples leg's results.jsonl")
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--tasks", help="these task numbers (default: every overfit task of the leg)")
    parser.add_argument("--mutants", type=int, default=32, help="passing mutants of the original confirmed")
    parser.add_argument("--no-model", action="store_true", help="the hidden verdicts only, no scores")
    parser.add_argument("--json", action="store_true", help="one JSON line per task, then the summary")
    args = parser.parse_args()
    if not args.results.is_file() or not args.data.is_file():
        parser.error(f"no such file: {args.results if not args.results.is_file() else args.data}")
    tasks = {t.task_id: t for t in load_tasks(args.data)}
    rows = [json.loads(line) for line in args.results.read_text().splitlines() if line.strip()]
    try:
        wanted = set(parse_task_list(args.tasks)) if args.tasks else None
    except UserError as exc:
        parser.error(str(exc))
    rows = [r for r in rows if (int(r["task_id"].rsplit("/", 1)[1]) in wanted if wanted is not None
                                else r.get("visible_passed") and not r["passed"])]
    scorer = None if args.no_model else Scorer()
    totals: dict[str, int] = {"tasks": 0, "with a right candidate": 0}
    with open_sandbox("docker") as sandbox:
        for row in rows:
            scored = score_task(tasks[row["task_id"]], row, sandbox, args.mutants, scorer)
            mixed = len({s.right for s in scored}) == 2
            chosen = picks(scored) if mixed else {}
            totals["tasks"] += 1
            totals["with a right candidate"] += any(s.right for s in scored)
            totals["with right and wrong ones"] = totals.get("with right and wrong ones", 0) + mixed
            for name, right in chosen.items():
                totals[f"right by {name}"] = totals.get(f"right by {name}", 0) + right
            line = {"task_id": row["task_id"], "pool": len(scored), "right": sum(s.right for s in scored),
                    "picks": chosen, "candidates": [asdict(s) for s in scored]}
            print(json.dumps(line) if args.json else
                  f"{row['task_id']}: pool {len(scored)}, right {line['right']}, picks right: "
                  + (", ".join(name for name, ok in chosen.items() if ok) or "-"), flush=True)
    print(json.dumps(totals) if args.json else " · ".join(f"{k} {v}" for k, v in totals.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
