"""What the thought-patch design's model reads (bot/agent/designs/thought_patch.py): the task with the function's
lines numbered, then the plan asked for in words, then that plan as JSON line edits. The task itself is the prompt
every design shares (bot/agent/steps/prompts.py)."""
from __future__ import annotations

from bot.agent.steps import prompts
from bot.agent.types import Briefing, Target
from bot.llm.types import Message

THOUGHT_PATCH_SYSTEM = """You find and fix the bug in one Python function whose tests fail, in the step each message asks
for: the fix plan in words, or that plan written as a JSON edit of the function's lines.
The bug is small: usually one line, often a wrong operator, constant, variable, call or condition."""  # noqa: E501

PLAN_ASK = """What is the root cause, and what is the fix? Reply in at most three short sentences and no code:
the root cause (which line is wrong, and why), then the concrete fix (exactly what that line should become).
Quote each line you name as it reads."""

EDIT_ASK = """Now write that fix as an edit of the function's lines. Reply with JSON only, in this form, naming each line
by its text as it reads now, without its indentation:
{"edits": [{"op": "replace", "line": "the line as it reads now", "code": "    the line as it should read"}]}
Operations: "replace" a line with code; "insert" code after a line: {"op": "insert", "after": "a line", "code": "..."};
"delete" a line: {"op": "delete", "line": "a line"}.
"code" is the new source text with its indentation; several lines are joined with \\n. Edit as few lines as you can."""  # noqa: E501


def thought(target: Target, briefing: Briefing, numbered: str, tried: list[str], situation: str,
            hints: list[str] = ()) -> list[Message]:  # type: ignore[assignment]
    earlier = ("\nEarlier patches that did not work (do not repeat them):\n" + "\n".join(tried[-4:]) + "\n"
               if tried else "")
    return [Message("system", THOUGHT_PATCH_SYSTEM),
            Message("user", f"{prompts.task(target, briefing, numbered)}\n\n{situation.strip()}\n{earlier}"
                            f"{prompts.hints_text(target, list(hints))}\n{PLAN_ASK}")]


def patch(plan: list[Message], retries: list[tuple[str, str]] = ()) -> list[Message]:  # type: ignore[assignment]
    """The thought's conversation, which ends in the plan as the model's own turn, continued: the edit asked for,
    then each edit of this plan that could not be applied with its reason. Continuing, rather than starting a
    conversation of its own, lets llama.cpp's cached prompt prefix cover all that came before, so only the new
    turns are evaluated (separate prompts alternated and the cache never hit)."""
    messages = [*plan, Message("user", f"{EDIT_ASK}\nThe `def` line stays as it is. Reply with the JSON edit.")]
    for answer, error in retries:
        messages += [Message("assistant", answer),
                     Message("user", f"That edit could not be applied: {error.strip()}\n"
                                     "Send a corrected edit, JSON only.")]
    return messages
