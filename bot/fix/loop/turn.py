"""One target's turn: the agent (the mutation search, then the model) on one span, or on a caller and the helper
it calls together, against the failing tests it is blamed for, with the tests that passed before as guards.

In: the run's context, what the run has found so far (`Work`), the spans, their failing tests, the options and
where the turn's time ends. Out: a `TargetRepair`, fixed (its tests pass and its guards hold) or not, with every
attempt as the tests ran it. Raises `ModelFailed` when the model is gone, and the stop of a stopped run. Never:
keeps or verifies a fix (bot/fix/loop/targets.py runs the whole suite), or changes `Work`'s files."""
from __future__ import annotations

import time
import traceback
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from bot.agent import AgentContext, AgentResult, Attempt, Briefing, RepairOptions, Schedule, Target
from bot.agent.antipatterns import anti_patterns
from bot.agent.source.code import changed_lines
from bot.agent.types import RepairInterrupted, SearchRound
from bot.errors import UserError
from bot.fix.context import FixRun
from bot.fix.locate.excerpt import Excerpt, answer_tokens, excerpt_context, excerpt_for
from bot.fix.loop.progress import progress_lines
from bot.fix.loop.work import Work
from bot.fix.options import FixOptions
from bot.fix.repair.briefing import agent_target, target_source, tests_shown
from bot.fix.repair.harness import RepoHarness
from bot.fix.repair.missing import is_stub
from bot.fix.reproduce.runs import guards_for
from bot.fix.result import MadeBy, RepairStatus, RepairStop, TargetRepair
from bot.fix.types import CodeTarget
from bot.llm.errors import PromptTooLong
from sandbox.errors import SandboxError

PASS_SEED = 10_000  # each pass's seeds start this far from the last one's
OTHER_SCHEDULE: dict[Schedule, Schedule] = {"rising": "falling", "falling": "rising"}


class ModelFailed(Exception):
    """The model failed during a repair; carries that repair's attempts so the report keeps them."""

    def __init__(self, message: str, repair: TargetRepair) -> None:
        super().__init__(message)
        self.repair = repair


def turn(repair: RepairOptions, passes: int, last: bool) -> tuple[RepairOptions, int]:
    """The repair's options and first seed for this turn. A later pass has other seeds and, every other pass, the
    other temperature schedule. Answers that leave the function unchanged give a target up so that the next one
    gets the model (`Budgets.unchanged`); the last of a pass has nothing to go on to, and keeps it."""
    later = passes - 1
    schedule = repair.schedule if not later % 2 else OTHER_SCHEDULE[repair.schedule]
    budgets = replace(repair.budgets, unchanged=None) if last else repair.budgets
    return replace(repair, schedule=schedule, budgets=budgets), PASS_SEED * later


def repair_one(ctx: FixRun, work: Work, spans: tuple[CodeTarget, ...], tests: frozenset[str],
               options: FixOptions, deadline: float, last: bool = False) -> TargetRepair:
    """Repair one target: one span, or a caller and the helper it calls together (`spans`, the caller first);
    `last`: nothing else is left to go on to in this pass (bot/fix/loop/targets.py, `alone`)."""
    harness = RepoHarness(ctx.sandbox, work.files, spans, tests, options.test_command, tuple(ctx.pythonpath),
                          work.test_timeout_s, guards=guards_for(work.baseline, spans, tests), deadline=deadline,
                          shown=tests_shown(work.files, tests, work.run.failures if work.run else ()))
    source = target_source(work.files, *spans)
    start = time.monotonic()

    def record(status: RepairStatus, stop_reason: RepairStop, attempts: Sequence[Attempt] = (),
               changed: int | None = None, fixed: str | None = None, searches: Sequence[SearchRound] = (),
               made_by: MadeBy | None = None) -> TargetRepair:
        return TargetRepair(target=spans[0], tests=tuple(sorted(tests)), status=status, stop_reason=stop_reason,
                            attempts=_as_tested(attempts, part), changed_lines=changed,
                            wall_s=time.monotonic() - start,
                            original=source, fixed=fixed, searches=tuple(searches), guards=len(harness.guards),
                            helper=spans[1] if len(spans) > 1 else None, made_by=made_by, stub=is_stub(source),
                            anti_patterns=anti_patterns(source, fixed, tests_shown(work.files, tests)) if fixed else ())

    ctx.say(f"  guarding {len(harness.guards)} test(s) that passed before and ran it")
    part: Excerpt | None = None
    try:
        first = harness.check(source)
        if first.passed:  # the blamed tests pass with this function as it is: not the culprit
            return record("not_fixed", "passed_without_change")
        target, part, harness = _as_shown(ctx, work, spans, tests, options, harness, first.feedback)
        terms, seed = turn(options.repair, work.passes, last)
        budgets = replace(terms.budgets, wall_s=max(1.0, deadline - time.monotonic()),
                          max_tokens_per_call=answer_tokens(target.source, terms.budgets.max_tokens_per_call))
        from bot.agent.graph import repair  # langgraph's second of imports only when a repair runs

        result = repair(AgentContext(llm=ctx.llm, harness=harness, target=target,
                                     briefing=Briefing(summary=first.feedback, tests=harness.shown),
                                     options=replace(terms, budgets=budgets), seed=seed,
                                     progress=progress_lines(ctx.say)))
    except RepairInterrupted as exc:
        if isinstance(exc.__cause__, PromptTooLong):  # this target's evidence, not the model: the next may fit
            ctx.say(f"  the prompt for {spans[0].qualname} does not fit the model's context ({exc}); going on")
            return record("not_fixed", "prompt_too_long", exc.attempts)
        repaired = record("not_fixed", "stopped" if exc.stop else "error", exc.attempts)
        if exc.stop:
            work.repairs.append(repaired)
            raise exc.stop from None
        raise ModelFailed(str(exc), repaired) from exc
    except (SandboxError, UserError):  # the machine or the user's input: the run's to report, not this target's
        raise
    except Exception as exc:  # a bug of fixbot's own, in this target's repair: the other targets still get theirs
        _report_internal_error(ctx, exc)
        return record("not_fixed", "internal_error")
    finally:
        ctx.tests_s += sum(run.duration_s for run in harness.runs)
    fixed, changed = _fix_as_tested(result, part)
    status: RepairStatus = "fixed" if fixed is not None else "not_fixed"
    if result.stop_reason == "unchanged":
        ctx.say(f"  the model answered with {spans[0].qualname} unchanged {options.repair.budgets.unchanged} times: "
                "it sees nothing to mend there; going on")
    return record(status, result.stop_reason, result.attempts, changed, fixed, result.searches,
                  result.fixed_by)


def _as_shown(ctx: FixRun, work: Work, spans: tuple[CodeTarget, ...], tests: frozenset[str], options: FixOptions,
              harness: RepoHarness, feedback: str) -> tuple[Target, Excerpt | None, RepoHarness]:
    """The target as the model is shown it: whole, or an excerpt where the failure points into a long function
    (with the harness that expands the excerpt's answers back into the whole function)."""
    target = agent_target(work.files, *spans)
    part = _excerpt(ctx, work, spans, tests, options, target, feedback)
    if part is None:
        return target, None, harness
    return (replace(target, source=part.source, context=excerpt_context(target, part)), part,
            replace(harness, expand=part.expand))


def _fix_as_tested(result: AgentResult, part: Excerpt | None) -> tuple[str | None, int | None]:
    """The agent's fix and its changed lines as the tests ran it: an excerpt's put back into its whole function."""
    if part is None or result.final_code is None:
        return result.final_code, result.changed_lines
    fixed = part.expand(result.final_code)
    return fixed, changed_lines(part.whole, fixed)


def _as_tested(attempts: Sequence[Attempt], part: Excerpt | None) -> tuple[Attempt, ...]:
    """The attempts' code as the tests ran it: an answer to an excerpt put back into its whole function, so that
    the report's change is the answer's change, not the rest of the function left out of the excerpt."""
    if part is None:
        return tuple(attempts)
    return tuple(replace(a, code=(code := part.expand(a.code)), changed_lines=changed_lines(part.whole, code))
                 if a.code else a for a in attempts)


def _report_internal_error(ctx: FixRun, exc: Exception) -> None:
    where = traceback.extract_tb(exc.__traceback__)[-1]
    ctx.say(f"  fixbot failed on this target ({type(exc).__name__}: {exc}, at "
            f"{Path(where.filename).name}:{where.lineno}); going on with the next. Please report it:\n"
            + "".join(traceback.format_exception(exc)).rstrip())


def _excerpt(ctx: FixRun, work: Work, spans: tuple[CodeTarget, ...], tests: frozenset[str], options: FixOptions,
             target: Target, feedback: str) -> Excerpt | None:
    """The part of a long function that the model is shown and answers with (bot/fix/locate/excerpt.py), if any."""
    if not options.repair.iterations or len(spans) > 1 or work.run is None:
        return None
    part = excerpt_for(work.checkout.root, work.files, work.run, spans[0], tests, target, feedback)
    if part is not None:
        ctx.say(f"  showing the model lines {part.first + 1}-{part.stop} of its {len(target.source.splitlines())} "
                "(where the failing tests' evidence points)")
    return part
