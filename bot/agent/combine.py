"""Failed attempts combined in pairs: a fix of two lines is often sent as two one-line changes that each fail
alone (Python/52 needs both of its returns swapped; the model swapped each in its own attempt, then repeated
them). When the model repeats itself, the designs that keep its attempts small (thought-patch's line edits,
tool-call's calls) try every new pair of their failed attempts' changes together, in one sandbox batch that
counts as one iteration and costs no model call.
"""
from __future__ import annotations

from dataclasses import replace
from difflib import SequenceMatcher

from ..llm.types import Completion
from .code import code_hash
from .context import AgentContext
from .nodes import candidate, checked
from .state import AgentState, Sample
from .types import Node

MAX_COMBINED = 6  # pairs tried in one batch

Change = tuple[int, int, list[str]]  # lines [start, end) of the original, and what replaces them


def _changes(original: list[str], other: str) -> list[Change]:
    lines = other.splitlines(keepends=True)
    return [(i1, i2, lines[j1:j2])
            for tag, i1, i2, j1, j2 in SequenceMatcher(None, original, lines, autojunk=False).get_opcodes()
            if tag != "equal"]


def merged(original: str, a: str, b: str) -> str | None:
    """`original` with the changes of both `a` and `b`, or None when they change the same lines (or either
    changes nothing)."""
    base = original.splitlines(keepends=True)
    ours, theirs = _changes(base, a), _changes(base, b)
    if not ours or not theirs:
        return None
    for i1, i2, _ in ours:
        for k1, k2, _ in theirs:
            if (i1 < k2 and k1 < i2) or i1 == k1:  # overlapping, or both inserting at one place
                return None
    out = list(base)
    for start, end, new in sorted(ours + theirs, key=lambda c: c[0], reverse=True):  # bottom up: indices hold
        out[start:end] = new
    return "".join(out)


def combinations(state: AgentState, ctx: AgentContext, node: Node) -> list[tuple[tuple[int, int], str]]:
    """Pairs of the failed attempts `node` made, not combined yet, newest first, up to MAX_COMBINED, whose changes
    together give new code: ((iteration, iteration), code)."""
    failed = [a for a in state["attempts"] if a.node == node and a.code and a.outcome in ("failed", "timeout")]
    done = state.get("combined", frozenset())
    found: list[tuple[tuple[int, int], str]] = []
    hashes: set[str] = set()
    for j in range(len(failed) - 1, 0, -1):
        for i in range(j - 1, -1, -1):
            pair = (failed[i].iteration, failed[j].iteration)
            if len(found) == MAX_COMBINED or pair in done:
                continue
            code = merged(ctx.target.source, failed[i].code or "", failed[j].code or "")
            if code is None:
                continue
            code, problem, _ = checked(code, None, "", state["seen"], ctx)
            if problem is None and code is not None and code_hash(code) not in hashes:
                hashes.add(code_hash(code))
                found.append((pair, code))
    return found


def combine_update(state: AgentState, ctx: AgentContext, node: Node) -> AgentState:
    """The state update of a combine node: the first new pair as the pending candidate, the others as its
    alternatives, all marked as combined."""
    found = combinations(state, ctx, node)
    (a, b), code = found[0]
    update = candidate("combine", Completion("", 0, 0, 0.0), 0.0, code, None, "", state, ctx, answer=_said(a, b))
    pending = update["pending"]
    assert pending is not None
    others = tuple(Sample(c, 0, 0, 0.0, 0.0, answer=_said(*pair)) for pair, c in found[1:])
    update["pending"] = replace(pending, alternatives=others)
    update["combined"] = state.get("combined", frozenset()) | {pair for pair, _ in found}
    return update


def _said(first: int, second: int) -> str:
    return f"the changes of attempts {first} and {second} together"
