"""After an answer that left the code unchanged, the reflect design asks which line is wrong before it asks for
the fix again: a small model that sees no bug rewrites the whole function as it was, again and again (hotter
answers included), but names a line when asked for one line, and changes a line it is pointed at.

In: the target, its briefing and failure, the lines named before. Out: a line of the target's code (stripped),
which the next prompt points at, and what the question cost. Never: a line of the docstring, the `def` line or
a line named before; a line that is not in the code (the model's quote is matched to the code, else nothing).
"""
from __future__ import annotations

import difflib
import re
from collections.abc import Sequence

from bot.agent.source.blocks import code_blocks
from bot.agent.source.code import split_docstring
from bot.agent.steps import prompts
from bot.agent.types import Briefing, Target
from bot.llm.types import Message

SUSPECT_SYSTEM = """You find the line of buggy Python code that makes its tests fail.
Reply with that one line, copied exactly as it reads in the code, in a ```python block, and nothing else."""
SUSPECT_TOKENS = 80  # one line of code, fenced
CLOSE = 0.8  # how alike a quote must be to a line of the code to stand for it (difflib's ratio)
_COMMENT = re.compile(r"\s+#.*$")  # a trailing comment, which a quote may leave out


def question(target: Target, briefing: Briefing, feedback: str, named: Sequence[str]) -> list[Message]:
    before = ("\nChanging these lines did not fix it, so the bug is elsewhere:\n"
              + "\n".join(f"    {line}" for line in named) + "\n") if named else ""
    return [Message("system", SUSPECT_SYSTEM),
            Message("user", f"{prompts.task(target, briefing)}\n\nThe tests fail:\n{feedback.strip()}\n{before}\n"
                            f"Which line of the code is wrong? Reply with that line only.")]


def candidates(target: Target, named: Sequence[str]) -> list[str]:
    """The code's lines the answer may name: not the docstring, not a `def` or decorator line, not blank or a
    comment, not named before."""
    code, _ = split_docstring(target.source)
    lines = [line.strip() for line in code.splitlines()]
    return list(dict.fromkeys(line for line in lines if line and not line.startswith(("def ", "async def ", "@", "#"))
                              and line not in named))


def suspect(answer: str, target: Target, named: Sequence[str]) -> str | None:
    """The line of the code the answer names: its first line that is one of `candidates`, or close to one."""
    quoted = [line.strip() for line in code_blocks(answer)[0].splitlines()  # a fence of another tag: its lines
              if line.strip() and not line.strip().startswith("```")]  # from the whole answer, without the fences
    lines = candidates(target, named)
    bare = {_COMMENT.sub("", line): line for line in reversed(lines)}  # the first line of each code wins
    for quote in quoted[:3]:
        if quote in lines:
            return quote
        close = difflib.get_close_matches(_COMMENT.sub("", quote), list(bare), n=1, cutoff=CLOSE)
        if close:
            return bare[close[0]]
    return None
