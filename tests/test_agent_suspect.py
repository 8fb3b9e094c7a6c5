"""The line a model names as wrong after an unchanged answer (bot/agent/designs/suspect.py), matched to the code."""
from __future__ import annotations

import pytest

from bot.agent.designs.suspect import candidates, suspect
from bot.agent.types import Target

CODE = '''def parse(text):
    """Seconds in `text`; None when there is none.

    raise ValueError on text that is no number
    """
    if not text:
        return 0.0  # nothing given
    return float(text.rstrip("s"))
'''
TARGET = Target("parse", CODE)


@pytest.mark.parametrize(("answer", "line"), [
    ("```python\n        return 0.0  # nothing given\n```", "return 0.0  # nothing given"),
    ("The wrong line is:\n```\nreturn 0.0\n```", "return 0.0  # nothing given"),  # close enough to stand for it
    ("if not text:", "if not text:"),
    ("```text\nif not text:\n```", "if not text:"),  # a fence of another tag: its lines, not the fence's
    ("```python\ndef parse(text):\n    return float(text.rstrip('s'))\n```", 'return float(text.rstrip("s"))'),
])
def test_the_quote_is_matched_to_a_line_of_the_code(answer: str, line: str) -> None:
    assert suspect(answer, TARGET, []) == line


@pytest.mark.parametrize("answer", [
    "raise ValueError on text that is no number",  # a line of the docstring, not of the code
    "def parse(text):",
    "x = compute(y)",  # no line of the code
    "",
])
def test_nothing_is_named_by_a_quote_that_is_no_line_of_the_code(answer: str) -> None:
    assert suspect(answer, TARGET, []) is None


def test_a_line_named_before_is_never_named_again() -> None:
    named = ["return 0.0  # nothing given"]
    assert suspect("return 0.0  # nothing given", TARGET, named) is None
    assert candidates(TARGET, named) == ["if not text:", 'return float(text.rstrip("s"))']
