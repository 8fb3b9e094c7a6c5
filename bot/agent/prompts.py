"""What the model reads. Short, concrete, and ordered so the per-task part is a stable prefix that the
backend's prompt cache reuses across iterations; only the latest attempt and its failure change."""
from __future__ import annotations

import difflib
import textwrap

from ..llm.types import Message
from .code import split_docstring
from .types import Attempt, Failure, Target

SYSTEM = """You repair one buggy Python function so that its tests pass.
The bug is small: usually one line, often a wrong operator, constant, variable, call or condition.
Reply with the whole corrected function in one ```python code block and nothing else:
no explanation, no docstring, no tests, no usage example.
Keep the function's name and parameters. Change as little as possible."""

MAX_TEST_LINES = 40


def _fence(code: str) -> str:
    return f"```python\n{code.rstrip()}\n```"


def _clip(text: str, max_lines: int) -> str:
    lines = text.strip("\n").splitlines()
    return "\n".join(lines[:max_lines] + ([f"# ... {len(lines) - max_lines} more lines"] if len(lines) > max_lines else []))


def _task(target: Target, failure: Failure) -> str:
    code, doc = split_docstring(target.source)
    parts = [f"The function `{target.name}` has a bug."]
    if doc:
        parts += ["What it should do:", textwrap.indent(doc.strip(), "    ")]
    parts += ["Its code:", _fence(code)]
    if any(line.strip() and not line.startswith(("import ", "from ")) for line in target.context.splitlines()):
        parts += ["It lives next to this code:", _fence(target.context)]
    if failure.tests.strip():
        parts += ["Its tests:", _fence(_clip(failure.tests, MAX_TEST_LINES))]
    return "\n".join(parts)


def _diff_lines(before: str, after: str) -> list[str]:
    """The removed (-) and added (+) lines between two versions, without the file headers."""
    return [line for line in difflib.unified_diff(before.splitlines(), after.splitlines(), lineterm="", n=0)
            if line[:1] in "+-" and not line.startswith(("+++", "---"))]


def _change(before: str, after: str) -> str:
    """One attempt in a line or two: what it changed."""
    diff = _diff_lines(before, after)
    return "; ".join(line.strip() if len(line) < 90 else line[:87] + "..." for line in diff[:4]) or "no change"


def _history(target: Target, attempts: list[Attempt]) -> str:
    tried = [a for a in attempts if a.code and a.outcome in ("failed", "timeout")][:-1]
    if not tried:
        return ""
    lines = [f"- {_change(target.source, a.code or '')}  => {a.feedback.splitlines()[0] if a.feedback else a.outcome}"
             for a in tried[-4:]]
    return "Earlier attempts that also failed (do not repeat them):\n" + "\n".join(lines)


def _edit(before: str, after: str) -> str:
    """A one-line change for people and models: `old line` -> `new line`."""
    diff = _diff_lines(before, after)
    old = "; ".join(line[1:].strip() for line in diff if line.startswith("-"))
    new = "; ".join(line[1:].strip() for line in diff if line.startswith("+"))
    return f"`{old}` -> `{new}`" if new else f"delete `{old}`"


def _hints(target: Target, hints: list[str]) -> str:
    if not hints:
        return ""
    lines = [f"- {_edit(target.source, h)}" for h in hints]
    return ("\nEach of these small changes makes the visible tests pass, but they do different things; the tests "
            "cannot tell which is right. Pick the one that does what the docstring says, or find the real fix:\n"
            + "\n".join(lines) + "\n")


def draft(target: Target, failure: Failure, hints: list[str] = ()) -> list[Message]:  # type: ignore[assignment]
    return [Message("system", SYSTEM),
            Message("user", f"{_task(target, failure)}\n\nThe tests fail:\n{failure.summary.strip()}\n"
                            f"{_hints(target, list(hints))}\nReply with the corrected function `{target.name}`.")]


def _follow_up(target: Target, failure: Failure, situation: str, attempts: list[Attempt], ask: str,
               hints: list[str] = ()) -> list[Message]:  # type: ignore[assignment]
    """A revision request: the task (a stable prefix), what just happened, earlier attempts, what to do."""
    history = _history(target, attempts)
    return [Message("system", SYSTEM),
            Message("user", f"{_task(target, failure)}\n\n{situation.strip()}\n" + (f"\n{history}\n" if history else "")
                    + _hints(target, list(hints)) + f"\n{ask} Reply with the corrected function `{target.name}`.")]


def reflect(target: Target, failure: Failure, current: str, feedback: str, attempts: list[Attempt],
            hints: list[str] = ()) -> list[Message]:  # type: ignore[assignment]
    situation = f"This attempt still fails:\n{_fence(split_docstring(current)[0])}\n{feedback.strip()}"
    return _follow_up(target, failure, situation, attempts, "Find the real bug.", hints)


def repeat(target: Target, failure: Failure, same_as: str, feedback: str, attempts: list[Attempt]) -> list[Message]:
    situation = f"Your answer was the same code as {same_as}, which fails:\n{feedback.strip()}"
    return _follow_up(target, failure, situation, attempts, "That change does not fix it. Read the docstring and "
                                                            "the failing test again and find a different bug.")


def syntax(target: Target, failure: Failure, problem: str) -> list[Message]:
    return [Message("system", SYSTEM),
            Message("user", f"{_task(target, failure)}\n\nYour last answer could not be used: {problem.strip()}\n\n"
                            f"Reply with the complete corrected function `{target.name}` in one ```python block, "
                            "with the same name and parameters.")]
