"""What the tool-call design's model reads (bot/agent/designs/tool_call.py): the task, the latest call's result,
and the tool it calls. The task itself is the prompt every design shares (bot/agent/steps/prompts.py)."""
from __future__ import annotations

from bot.agent.steps import prompts
from bot.agent.types import Attempt, Briefing, Target
from bot.llm.types import Message

TOOL_SYSTEM = """You repair one buggy Python function so that its tests pass.
The bug is small: usually one line, often a wrong operator, constant, variable, call or condition.
Call run_tests with the whole corrected function as `code` (no docstring, no tests) and one sentence in
`explanation`. It answers with the test result; if the tests still fail, call it again with a better fix.
Keep the function's name and parameters. Change as little as possible."""


def tool_task(target: Target, briefing: Briefing, result: str, attempts: list[Attempt],
              hints: list[str] = ()) -> list[Message]:  # type: ignore[assignment]
    """The tool-call conversation: the task, then `result`, what the model's latest call came to (or the tests'
    first failure), with its earlier calls that failed summed up in a line each."""
    tried = prompts.history(target, attempts)
    earlier = f"\n{tried}\n" if tried else ""
    hinted = prompts.hints_text(target, list(hints))
    return [Message("system", TOOL_SYSTEM),
            Message("user", f"{prompts.task(target, briefing)}\n\n{result.strip()}\n{earlier}{hinted}"
                            f"\nCall run_tests with your corrected `{target.name}`.")]
