"""From task results to summary.json, a printed table and curve.png (pass@1 against the iteration budget)."""
from __future__ import annotations

import json
import statistics
from collections import Counter, defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bot.errors import UserError

from .results import RUN_DEFAULTS, TaskResult


def summarize(results: Sequence[TaskResult], run: dict[str, Any]) -> dict[str, Any]:
    n = len(results)
    iterations = int(run["iterations"])
    by_bug: dict[str, list[TaskResult]] = defaultdict(list)
    for r in results:
        by_bug[r.bug_type].append(r)
    tokens = [a["completion_tokens"] for r in results for a in r.attempts]
    changed = [r.changed_lines for r in results if r.passed and r.changed_lines is not None]
    curve = [round(sum(1 for r in results if r.solved_at is not None and r.solved_at <= k) / n, 4) if n else 0.0
             for k in range(1, iterations + 1)]
    return {
        **run,
        "n_tasks": n,
        "passed": sum(r.passed for r in results),
        "pass_at_1": round(sum(r.passed for r in results) / n, 4) if n else 0.0,
        "single_shot_pass_at_1": curve[0] if curve else 0.0,
        "pass_at_1_by_iteration": curve,
        "by_bug_type": {bug: {"n": len(rs), "passed": sum(r.passed for r in rs),
                              "pass_at_1": round(sum(r.passed for r in rs) / len(rs), 4)}
                        for bug, rs in sorted(by_bug.items())},
        "visible_passed_hidden_failed": sum(r.visible_passed and not r.passed for r in results),
        "errors": sum(r.error is not None for r in results),
        "wall_s": round(sum(r.wall_s for r in results), 1),
        "median_task_wall_s": round(statistics.median([r.wall_s for r in results]), 2) if n else 0.0,
        "median_iterations": statistics.median([r.iterations for r in results]) if n else 0,
        "median_completion_tokens": statistics.median(tokens) if tokens else 0,
        "median_changed_lines": statistics.median(changed) if changed else None,
        "model_calls": len(tokens),
        # why each task ended; "time" means the wall-time budget, not the model, decided it (a slow machine)
        "stop_reasons": dict(sorted(Counter(r.stop_reason for r in results).items())),
        "time": time_split(results),
        **_search_summary(results),
        **_selection_summary(results),
    }


def time_split(results: Sequence[TaskResult]) -> dict[str, float]:
    """Where the tasks' time went: the model (of it, evaluating prompts: the rest is mostly generating), the
    mutation search, and the rest (test runs in the sandbox, fixbot's own work)."""
    wall = sum(r.wall_s for r in results)
    model = sum(a["latency_s"] for r in results for a in r.attempts)
    search = sum(s["seconds"] for r in results for s in r.searches)
    return {"tasks_s": round(wall, 1), "model_s": round(model, 1),
            "prompt_eval_s": round(sum(a.get("prompt_eval_s", 0.0) for r in results for a in r.attempts), 1),
            "search_s": round(search, 1), "rest_s": round(max(wall - model - search, 0.0), 1)}


def _search_summary(results: Sequence[TaskResult]) -> dict[str, Any]:
    rounds = [s for r in results for s in r.searches]
    if not rounds:
        return {}
    by_search = [r for r in results if r.fixed_by == "search"]
    seconds = sum(s["seconds"] for s in rounds)
    return {
        "fixed_by_search": sum(r.passed for r in by_search),
        # one edit away from a model's candidate: the model and the search made it together
        "fixed_by_search_on_model": sum(r.passed for r in results if r.fixed_by == "search-on-model"),
        "search_visible_passed_hidden_failed": sum(not r.passed for r in by_search),
        "search_rounds": len(rounds),
        "search_candidates": sum(s["candidates"] for s in rounds),
        "search_seconds": round(seconds, 1),
        "search_candidates_per_s": round(sum(s["candidates"] for s in rounds) / seconds, 1) if seconds else 0.0,
    }


def _selection_summary(results: Sequence[TaskResult]) -> dict[str, Any]:
    chosen = [r for r in results if r.selection]
    if not chosen:
        return {}
    changed = [r for r in chosen if r.selection and r.selection["changed"]]
    return {"selected": len(chosen), "selected_among_several": sum(r.selection["candidates"] > 1 for r in chosen
                                                                     if r.selection),
            "selection_changed": len(changed), "selection_changed_passed": sum(r.passed for r in changed),
            "selection_with_asserts": sum(bool(r.selection and r.selection.get("asserts")) for r in chosen),
            "selection_scored": sum(bool(r.selection and r.selection.get("scored")) for r in chosen),
            "selection_with_references": sum(bool(r.selection and r.selection.get("expected")) for r in chosen),
            "selection_rewritten": sum(bool(r.selection and r.selection.get("rewritten")) for r in chosen),
            "selection_set_aside": sum(bool(r.selection and r.selection.get("set_aside")) for r in chosen)}


def table(summary: dict[str, Any]) -> str:
    rows = [f"{'bug type':<20}{'n':>5}{'passed':>8}{'pass@1':>9}"]
    for bug, s in summary["by_bug_type"].items():
        rows.append(f"{bug:<20}{s['n']:>5}{s['passed']:>8}{s['pass_at_1']:>9.3f}")
    rows.append(f"{'all':<20}{summary['n_tasks']:>5}{summary['passed']:>8}{summary['pass_at_1']:>9.3f}")
    rows.append(f"single-shot pass@1 {summary['single_shot_pass_at_1']:.3f} · wall {summary['wall_s']:.0f} s · "
                f"median completion {summary['median_completion_tokens']} tokens/call · "
                f"median changed lines {summary['median_changed_lines']}")
    t = summary.get("time")
    if t and t["tasks_s"]:
        rows.append(f"time: model {t['model_s']:.0f} s (evaluating prompts {t['prompt_eval_s']:.0f} s, generating "
                    f"and the rest {t['model_s'] - t['prompt_eval_s']:.0f} s) · search {t['search_s']:.0f} s · "
                    f"tests in the sandbox and the rest {t['rest_s']:.0f} s")
    cut = summary.get("stop_reasons", {}).get("time")
    if cut:
        budget = summary.get("task_seconds", RUN_DEFAULTS["task_seconds"])
        rows.append(f"{cut} task(s) stopped on the wall-time budget ({budget:g} s) before their iterations ran out")
    if "search_rounds" in summary:
        rows.append(f"search: {summary['fixed_by_search']} fixed alone "
                    f"(+{summary['search_visible_passed_hidden_failed']} passing only the visible tests), "
                    f"{summary.get('fixed_by_search_on_model', 0)} one edit from a "
                    f"model's candidate · {summary['search_candidates']} candidates in "
                    f"{summary['search_seconds']:.0f} s ({summary['search_candidates_per_s']:.0f}/s)")
    if "selected" in summary:
        rows.append(f"vote: {summary['selected']} fixes chosen, {summary['selected_among_several']} among several "
                    f"candidates; {summary['selection_changed']} not the first found "
                    f"({summary['selection_changed_passed']} of them pass the hidden tests); the model's asserts "
                    f"weighed in {summary.get('selection_with_asserts', 0)}, its likelihood chose in "
                    f"{summary.get('selection_scored', 0)}; references from the docstring agreed on inputs in "
                    f"{summary.get('selection_with_references', 0)} (a reference chosen in "
                    f"{summary.get('selection_rewritten', 0)}); candidates that behave like the original set "
                    f"aside in {summary.get('selection_set_aside', 0)}")
    return "\n".join(rows)


def plot_curve(summary: dict[str, Any], path: Path) -> None:
    try:
        import matplotlib
    except ImportError:
        raise UserError("the plot needs the eval extra: pip install 'fixbot[eval]' (matplotlib)") from None

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    curve = summary["pass_at_1_by_iteration"]
    fig, ax = plt.subplots(figsize=(6, 4))
    ax.plot(range(1, len(curve) + 1), curve, marker="o")
    ax.set(xlabel="iteration budget", ylabel="pass@1", ylim=(0, 1), xticks=range(1, len(curve) + 1),
           title=f"{summary['model']} · {summary['protocol']} protocol · {summary['n_tasks']} tasks")
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def write_outputs(results: Sequence[TaskResult], run: dict[str, Any], out: Path) -> dict[str, Any]:
    summary = summarize(results, run)
    (out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    if results:
        plot_curve(summary, out / "curve.png")
    return summary
