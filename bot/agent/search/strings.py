"""Edits of string literals: the one-token string bugs, which no operator of numbers or names reaches.

A separator that should be empty or a space (`' '.join` for `''.join`), a character too many or too few (`"__"`
for `"_"`, `"E+"` for `"E"`), the wrong bracket (`'('` for `'['`), another literal of the same function (`"d"` where
`"db"` belongs), the wrong case (`'yes'` for `'Yes'`). A value that appears several times is also edited
everywhere at once, and the case of every word literal at once (`'yes'`/`'no'` both capitalized): such a value is
usually one decision written twice. A multi-site edit is one span, from the first literal to the last, with the
text between them kept.

Only plain one-line literals are edited (no prefix, no escape, no quote of their own kind inside), and not regular
expressions (bot/agent/search/regex.py) or docstrings.
"""
from __future__ import annotations

import ast
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

from bot.agent.search.text import Edit, Text

MAX_LENGTH = 40  # a longer literal is a message, not a value a test pins character by character
MAX_OTHERS = 6  # other literals of the function tried in a literal's place
BRACKETS = ("([{<", ")]}>")
CASES: tuple[Callable[[str], str], ...] = (str.capitalize, str.upper, str.lower)


@dataclass(frozen=True)
class Literal:
    start: int
    end: int
    value: str
    quote: str  # ' or "

    def written(self, value: str) -> str:
        return self.quote + value + self.quote


def _literals(text: Text, nodes: Sequence[ast.AST], segment: Callable[[ast.AST], str],
              patterns: Sequence[ast.AST]) -> list[Literal]:
    """The plain one-line literals: 'abc' or "abc" with nothing escaped, not a pattern, not a message."""
    skip = {id(p) for p in patterns}
    found = []
    for n in nodes:
        if isinstance(n, ast.Constant) and isinstance(n.value, str) and len(n.value) <= MAX_LENGTH \
                and id(n) not in skip:
            written = segment(n)
            quote = written[:1]
            if quote in ("'", '"') and written == quote + n.value + quote and not {"\\", "\n"} & set(n.value):
                found.append(Literal(*text.span(n), n.value, quote))
    return found


def _values(value: str, others: Sequence[str]) -> list[str]:
    """What `value` might have been meant to be, likeliest first."""
    out = [""] if value else [" "]
    if len(value) >= 2:
        out += [value[:-1], value[1:]]
    if 1 <= len(value) <= 3:
        out.append(value + value[-1])
    if 2 <= len(value) <= 4:
        out.append(value[::-1])
    for side in BRACKETS:
        if len(value) == 1 and value in side:
            out += [c for c in side if c != value]
    out += [case(value) for case in CASES]
    out += [o for o in others if o != value][:MAX_OTHERS]
    return [v for v in dict.fromkeys(out) if v != value]


def _spanning(source: str, replaced: list[tuple[Literal, str]]) -> Edit | None:
    """One edit from the first literal to the last, each given its new value, the text between them kept; None
    when a new value holds its literal's own quote (it would need an escape)."""
    if any(lit.quote in new for lit, new in replaced):
        return None
    replaced = sorted(replaced, key=lambda r: r[0].start)
    out, at = [], replaced[0][0].start
    for lit, new in replaced:
        out += [source[at:lit.start], lit.written(new)]
        at = lit.end
    return replaced[0][0].start, at, "".join(out)


def _edits(source: str, literals: list[Literal]) -> Iterator[Edit | None]:
    values = list(dict.fromkeys(lit.value for lit in literals))
    for lit in literals:
        yield from (_spanning(source, [(lit, new)]) for new in _values(lit.value, values))
    for value in values:
        same = [lit for lit in literals if lit.value == value]
        if len(same) > 1:
            yield from (_spanning(source, [(lit, new) for lit in same]) for new in _values(value, values))
    words = [lit for lit in literals if lit.value.isalpha()]
    if len({lit.value for lit in words}) > 1:
        for case in CASES:
            changed = [(lit, case(lit.value)) for lit in words if case(lit.value) != lit.value]
            if len(changed) > 1:
                yield _spanning(source, changed)


def string_edits(text: Text, nodes: Sequence[ast.AST], segment: Callable[[ast.AST], str],
                 patterns: Sequence[ast.AST] = ()) -> Iterator[Edit]:
    """Every edit of the scope's plain string literals (`patterns`, regular expressions, are left alone)."""
    literals = _literals(text, nodes, segment, patterns)
    yield from (edit for edit in _edits(text.source, literals) if edit is not None)
