"""`fixbot fix` end to end: reproduce → locate → repair → verify → patch, into one `FixResult`.

Resolve first, publish second: nothing here touches the user's tree (the CLI applies the patch on request) or
GitHub (bot.github publishes the artifact). Only verified changes become the base of the next target: a target
whose fix breaks a test in the whole suite is undone. The run holds its time budget (`wall_s`, a hard limit) and,
when stopped by it or by a signal, reports what it has."""
from __future__ import annotations

import signal
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from bot.checkout.repository import Checkout
from bot.errors import Stopped
from bot.fix.context import FixRun
from bot.fix.loop.targets import rename_missing, repair_loop, stub_missing
from bot.fix.loop.turn import ModelFailed
from bot.fix.loop.work import Work, best_attempt
from bot.fix.options import FixOptions
from bot.fix.repair.briefing import explanation
from bot.fix.repair.renames import rename_explanation
from bot.fix.reproduce.env_retry import with_remedied
from bot.fix.reproduce.hold_back import with_held_back
from bot.fix.reproduce.runs import (
    Reproduced,
    reproduce,
    unrunnable,
)
from bot.fix.result import FixResult, Timings, left_alone, set_aside
from bot.fix.types import FixStatus
from bot.fix.verify.patch import PatchRejected, make_patch, validate
from sandbox.errors import SandboxError

__all__ = ["fix"]
DEFAULT_OPTIONS = FixOptions()
STOP_GRACE_S = 5.0  # past the budget, the alarm stops whatever still runs


@contextmanager
def alarm_at(deadline: float) -> Iterator[None]:
    """Within the block, reaching `deadline` (time.monotonic()) raises Stopped("time"). Signals reach only the
    main thread: elsewhere (a test's worker thread) the budgets alone bound the run."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def ring(signum: int, frame: object) -> None:
        raise Stopped("time")

    previous = signal.signal(signal.SIGALRM, ring)
    signal.setitimer(signal.ITIMER_REAL, max(0.001, deadline - time.monotonic()))
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def fix(checkout: Checkout, ctx: FixRun, options: FixOptions = DEFAULT_OPTIONS, *, model: str = "") -> FixResult:
    started = time.monotonic()
    deadline = started + options.wall_s - ctx.setup_s  # the budget covers building the environment too
    work = Work(checkout, dict(checkout.files))

    def done(status: FixStatus, message: str, **more: Any) -> FixResult:
        attempts = [a for r in work.repairs for a in r.attempts]
        timings = Timings(round(ctx.setup_s, 2), round(ctx.tests_s, 2), round(sum(a.latency_s for a in attempts), 2),
                          round(time.monotonic() - started + ctx.setup_s, 2),
                          round(sum(a.prompt_eval_s for a in attempts), 2))
        return FixResult(status=status, message=message, runs=tuple(ctx.runs), timings=timings, failures=work.failures,
                         failing=tuple(sorted(work.failing)), flaky=work.flaky, offline=work.offline,
                         lacking=work.lacking, environment=work.environment, held_back=work.held_back,
                         env_changes=work.env_changes, targets=tuple(work.ranked),
                         repairs=tuple(work.swept + work.repairs), repository=checkout.root,
                         test_command=str(options.test_command), model=model, **more)

    try:
        with alarm_at(deadline + STOP_GRACE_S):
            return _fix(ctx, work, options, deadline, model, done)
    except (Stopped, KeyboardInterrupt) as exc:
        stop = exc if isinstance(exc, Stopped) else Stopped("interrupted", signal_number=2)
        if stop.by_signal:
            return done("interrupted", f"stopped by a signal ({stop.reason}) after {len(work.repairs)} target(s)",
                        best=best_attempt(work))
        return done("not_fixed", f"the time budget ({options.wall_s:g} s) ran out after {len(work.repairs)} "
                                 "target(s)", best=best_attempt(work))
    except ModelFailed as exc:
        work.repairs.append(exc.repair)
        return done("not_fixed", f"the model failed: {exc}", error=f"the model failed: {exc}", best=best_attempt(work))
    except SandboxError as exc:  # the machine's failure, not the code's: exit 2, with the report of what was done
        return done("not_fixed", f"the sandbox failed: {exc}", error=f"the sandbox failed: {exc}",
                    best=best_attempt(work))


def _fix(ctx: FixRun, work: Work, options: FixOptions, deadline: float, model: str, done) -> FixResult:
    def reproduced(run: FixRun) -> Reproduced:
        return reproduce(run, work.files, options.test_command, log_failures=options.log_failures,
                         suite_timeout_s=options.suite_timeout_s, test_timeout_s=options.test_timeout_s,
                         deadline=deadline)

    found, work.held_back = with_held_back(ctx, reproduced(ctx), reproduced)
    found, rebuilt = with_remedied(ctx, found, reproduced, work.held_back)
    work.env_changes = tuple(change.describe() for change in rebuilt)
    work.before, work.flaky, work.test_timeout_s = found.before, found.flaky, found.test_timeout_s
    work.offline, work.lacking, work.environment = found.offline, found.lacking, found.environment
    work.failing = work.remaining = found.failing
    work.run = found.before
    if not found.before.failed:
        return done("nothing_to_fix", "all tests pass: nothing to fix")
    if not found.failing and (found.offline or found.lacking or any(c.tests for c in found.environment)) \
            and not found.flaky:
        return done(*unrunnable(found))
    if not found.failing:
        return done("flaky", f"{len(found.flaky)} failing test(s) did not fail again in the sandbox: flaky, not fixed")
    ctx.say(f"  per-test time limit: {work.test_timeout_s:.3g} s")
    rename_missing(ctx, work, options, deadline)
    stub_missing(ctx, work, options, deadline)
    repair_loop(ctx, work, options, deadline, model)
    fixed = [r for r in work.repairs if r.status == "fixed"]
    if not fixed or work.remaining:
        pairs = f" and {len(work.pairs)} caller-helper pair(s)" if work.pairs else ""
        why = (f"{len(work.remaining)} test(s) still fail after trying {len(work.tried)} target(s){pairs}"
               f"{'' if work.tried else _nothing_to_blame(work, options.paths)}" if time.monotonic() < deadline else
               f"the time budget ({options.wall_s:g} s) ran out with {len(work.remaining)} test(s) still failing")
        return done("not_fixed", why, best=best_attempt(work))
    diff = make_patch(work.checkout.files, work.files)
    changed = sum(r.changed_lines or 0 for r in fixed)
    try:
        validate(diff, work.checkout.root, {t.path for r in fixed for t in r.spans})
    except PatchRejected as exc:
        return done("not_fixed", f"the patch was rejected: {exc}", best=best_attempt(work))
    why = " ".join(rename_explanation(r) if r.stop_reason == "renamed" else
                   explanation(r.target, r.original, r.fixed or "", work.failures, r.tests, r.helper) for r in fixed)
    return done("fixed", f"fixed {len(work.failing)} failing test(s) with {changed} changed line(s)"
                f"{_left_alone(work)}",
                explanation=why, diff=diff, changed_lines=changed)


def _left_alone(work: Work) -> str:
    """What else still fails, not changed by the fix (no test that passed before fails with it)."""
    unnamed = left_alone(work.failures, work.failing, set_aside(work.flaky, work.offline, work.lacking,
                                                                work.environment))
    counts = {"because of the environment": sum(len(c.tests) for c in work.environment),
              "need the network": len(work.offline), "run a program the sandbox lacks": len(work.lacking),
              "flaky": len(work.flaky), "not named by the CI log": len(unnamed)}
    said = [f"{n} {why}" for why, n in counts.items() if n]
    if not said:
        return "; the whole suite passes"
    return f"; {sum(counts.values())} other failing test(s) left alone ({', '.join(said)})"


def _nothing_to_blame(work: Work, paths: Sequence[str]) -> str:
    """Why no target was tried: no traceback frame or covered line of project code in the failing tests (they fail
    before reaching it: in a test helper, a fixture, a mock of a name the project lacks). The first one's error
    says where."""
    first = next((f for f in work.failures if f.test_id in work.remaining), None)
    where = f" (first: {first.test_id}: {first.error_line[:200]})" if first else ""
    within = f" within {', '.join(paths)} (`paths`)" if tuple(paths) != DEFAULT_OPTIONS.paths else ""
    return f": nothing in their tracebacks or coverage points at project code{within}{where}"
