"""Two-span repairs. A bug split between a helper and its caller (the caller passes a wrong argument and the
helper mishandles it) defeats every one-span repair: fixing either function alone leaves the failing test red.
Such a pair is repaired together, as one target of the agent's whose code is both functions
(bot/agent/source/parts.py), and the harness splices each function into its own span.

A pair is tried right after the second of its one-span repairs failed, when the evidence links the two: both
were ranked targets that answered for a test that still fails (its traceback frames or its coverage), and the
caller's code calls the helper by name. The model is shown a pair whole, so each function must be short enough to
be shown whole (bot/fix/locate/excerpt.py, MAX_FUNCTION_LINES): two long ones would not fit its context."""
from __future__ import annotations

import ast
from collections.abc import Mapping, Sequence
from dataclasses import replace

from bot.fix.locate.excerpt import MAX_FUNCTION_LINES
from bot.fix.locate.spans import code_spans
from bot.fix.repair.briefing import target_source
from bot.fix.result import TargetRepair
from bot.fix.types import CodeTarget

PairKey = tuple[tuple[str, str], tuple[str, str]]  # (path, qualname) of the caller, then of the helper


def _name(target: CodeTarget) -> str:
    return target.qualname.rsplit(".", 1)[-1]


def calls(files: Mapping[str, bytes], caller: CodeTarget, helper: CodeTarget) -> bool:
    """The caller's code calls the helper by its name: `helper(...)`, `self.helper(...)`, `module.helper(...)`.
    Two functions of the same name never pair: the model's answer is read by name."""
    if caller.kind != "function" or helper.kind != "function" or _name(caller) == _name(helper):
        return False
    try:
        tree = ast.parse(target_source(files, caller))
    except SyntaxError:
        return False
    called = {n.func.id if isinstance(n.func, ast.Name) else n.func.attr for n in ast.walk(tree)
              if isinstance(n, ast.Call) and isinstance(n.func, (ast.Name, ast.Attribute))}
    return _name(helper) in called


def _whole(target: CodeTarget) -> bool:
    return target.end - target.start + 1 <= MAX_FUNCTION_LINES


def pair_key(caller: CodeTarget, helper: CodeTarget) -> PairKey:
    return (caller.path, caller.qualname), (helper.path, helper.qualname)


def current(files: Mapping[str, bytes], target: CodeTarget) -> CodeTarget | None:
    """The target's span in the files as they are now (a fix verified since it was ranked may have moved it)."""
    try:
        spans = code_spans(files[target.path].decode("utf-8", "surrogateescape"))
    except (KeyError, SyntaxError, ValueError):
        return None
    span = next((s for s in spans if s.qualname == target.qualname and s.kind == target.kind), None)
    return replace(target, start=span.start, end=span.end) if span else None


def next_pair(files: Mapping[str, bytes], repairs: Sequence[TargetRepair], remaining: frozenset[str],
              tried: set[PairKey]) -> tuple[CodeTarget, CodeTarget, frozenset[str]] | None:
    """(caller, helper, the failing tests that blamed both) to repair together now: when the latest repair is a
    one-span repair that failed, and an earlier one that failed calls it or is called by it."""
    failed = [r for r in repairs if r.helper is None and r.status != "fixed"
              and r.stop_reason != "passed_without_change"]  # its tests passed as it was: not the culprit
    if not failed or failed[-1] is not repairs[-1]:
        return None
    last = failed[-1]
    for other in reversed(failed[:-1]):
        tests = frozenset(last.tests) & frozenset(other.tests) & remaining
        for caller, helper in ((last.target, other.target), (other.target, last.target)):
            if not tests or pair_key(caller, helper) in tried:
                continue
            now_caller, now_helper = current(files, caller), current(files, helper)
            if now_caller is not None and now_helper is not None and _whole(now_caller) and _whole(now_helper) \
                    and calls(files, now_caller, now_helper):
                return now_caller, now_helper, tests
    return None
