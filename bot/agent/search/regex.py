"""One-edit mutants of regular expressions, the pattern literals of a function.

Projects that parse text (dates, URLs, markup, JavaScript) keep much of their logic in patterns, and their bugs
there are one token away as often as in code: a class that should exclude one more character (`[^;]` ->
`[^&;]`) or one fewer, `+` that should be `*`, a group that should be optional, an anchor too many, a word
boundary missing (`0+[0-7]+` also matching the end of `x07`), a `\\s` that should be any character (a comment
after the closing parenthesis). The edits
work on the literal's source text, so that a raw string stays byte for byte what it was around the edit; a
string with escapes that are not raw is left alone (its text is not its value).

A failure often quotes the input the code could not parse (`Unsupported JS expression 'x()'`, or the test's line
`parse('00:00:01:100')`): the edits after which a pattern finds such a string, which it did not find before,
are the likeliest (`matching_edits`).
"""
from __future__ import annotations

import ast
import itertools
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TypeGuard

from bot.agent.search.text import Text

RE_CALLS = frozenset({"compile", "match", "fullmatch", "search", "sub", "subn", "split", "findall", "finditer"})
QUOTES = ('"""', "'''", '"', "'")
Edit = tuple[int, int, str]  # start, end (offsets in the text given), replacement
# a string literal a failure shows, not part of a longer token (a prefixed `b'..'` or `r'..'` is left out)
QUOTED = re.compile(r"""(?<![\w'"])(?:'(?:[^'\\\n]|\\.){1,200}'|"(?:[^"\\\n]|\\.){1,200}")""")
MAX_QUOTED = 12
PLACEHOLDER = re.compile(r"%(?:\(\w+\))?[sdr]")  # what `%` fills in a pattern built with it: any text


def pattern_literals(nodes: list[ast.AST], segment: Callable[[ast.AST], str]) -> list[ast.Constant]:
    """The string constants that are patterns: raw strings anywhere (they are almost always patterns), and any
    string in the pattern argument of an `re` call (also inside the `%` or `.format` that builds it)."""
    found: dict[int, ast.Constant] = {}
    for n in nodes:
        if _is_str(n) and "r" in _prefix(segment(n))[0].lower():
            found[id(n)] = n
        elif isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in RE_CALLS \
                and isinstance(n.func.value, ast.Name) and n.func.value.id == "re" and n.args:
            found.update((id(c), c) for c in ast.walk(n.args[0]) if _is_str(c))
    return list(found.values())


def _is_str(node: ast.AST) -> TypeGuard[ast.Constant]:
    return isinstance(node, ast.Constant) and isinstance(node.value, str)


def _prefix(segment: str) -> tuple[str, str]:
    """The literal's prefix letters (`r`, `u`, ...) and its quote."""
    letters = re.match(r"[A-Za-z]*", segment)
    prefix = letters.group(0) if letters else ""
    quote = next((q for q in QUOTES if segment[len(prefix):].startswith(q)), "")
    return prefix, quote


def literal_edits(segment: str, value: str) -> Iterator[Edit]:
    """Edits of one string literal's source text (`segment`, quotes included) that keep it a valid pattern.
    Only where the text between the quotes is the value (raw, or without escapes; not implicitly joined)."""
    prefix, quote = _prefix(segment)
    if not quote or any(c in prefix.lower() for c in "bf") or not segment.endswith(quote):
        return
    start = len(prefix) + len(quote)
    body = segment[start:len(segment) - len(quote)]
    flags = _compiles(body) if body == value else None
    if flags is None:
        return
    seen = {body}
    for begin, end, new in pattern_edits(body):
        changed = body[:begin] + new + body[end:]
        if changed not in seen and _compiles(changed, flags) is not None:
            seen.add(changed)
            yield start + begin, start + end, new


def _compiles(pattern: str, flags: int | None = None) -> int | None:
    """The flags the pattern compiles with (plain, else verbose), or None when it does not compile."""
    for option in ((flags,) if flags is not None else (0, re.VERBOSE)):
        try:
            re.compile(pattern, option)
            return option
        except (re.error, RecursionError, OverflowError):
            continue
    return None


@dataclass
class _Scan:
    """What one pass over a pattern found: its classes, groups, quantifiers, anchors and literal punctuation."""
    classes: list[tuple[int, int, bool]] = field(default_factory=list)  # items start, `]` offset, negated
    groups: list[tuple[int, int]] = field(default_factory=list)  # `(` offset, `)` offset
    edits: list[Edit] = field(default_factory=list)  # quantifier and anchor edits, found on the way
    branches: list[int] = field(default_factory=list)  # where an alternative starts (pattern, group, after `|`)
    punctuation: dict[str, None] = field(default_factory=dict)  # literal characters outside classes, in order


def pattern_edits(body: str) -> Iterator[Edit]:
    """Candidate edits of a pattern's text, before checking that they compile: quantifier and anchor edits, class
    edits, optional groups and word boundaries taken in turn, so that a long pattern's many class items do not push
    the other kinds past the search's cap."""
    scan = _scan(body)
    classes = [e for items, close, negated in scan.classes
               for e in _class_edits(body, items, close, negated, scan.punctuation)]
    groups = []
    for open_, close in scan.groups:
        lookaround = body[open_ + 1:open_ + 3] in ("?=", "?!") or body[open_ + 1:open_ + 4] in ("?<=", "?<!")
        if not lookaround and body[close + 1:close + 2] not in ("*", "+", "?", "{"):
            groups.append((close + 1, close + 1, "?"))  # the group becomes optional
    for turn in itertools.zip_longest(scan.edits, classes, groups, _boundary_edits(body, scan.branches)):
        yield from (edit for edit in turn if edit is not None)


def _scan(body: str) -> _Scan:
    scan, stack = _Scan(), []
    flags = re.match(r"\(\?[a-zA-Z]+\)", body)  # `(?sx)` opens no alternative; the first starts after it
    i = flags.end() if flags else 0
    scan.branches.append(i)
    while i < len(body):
        c = body[i]
        if c == "\\":
            i += 2
            continue
        if c == "[":
            items = i + 1 + (body[i + 1:i + 2] == "^")
            close = _class_end(body, items)
            scan.classes.append((items, close, items > i + 1))
            i = close + 1
            continue
        if c == "(":
            stack.append(i)
            opening = re.match(r"\((?:\?:|\?P<\w+>)?", body[i:])
            assert opening is not None  # body[i] is "("
            inner = opening.end()
            if body[i + 1:i + 2] != "?" or inner > 2:  # a capturing or `(?:`/`(?P<>` group, not a lookaround
                scan.branches.append(i + inner)
        elif c == "|":
            scan.branches.append(i + 1)
        elif c == ")" and stack:
            scan.groups.append((stack.pop(), i))
        elif c in "+*" and i > 0:
            scan.edits.append((i, i + 1, "*" if c == "+" else "+"))
            if body[i + 1:i + 2] == "?":
                scan.edits.append((i + 1, i + 2, ""))  # lazy becomes greedy
        elif c == "?" and i > 0 and body[i - 1] not in "(+*?}":
            scan.edits.append((i, i + 1, ""))  # an optional part becomes required
        elif c in "^$":
            scan.edits.append((i, i + 1, ""))  # an anchor dropped
        elif not c.isalnum() and not c.isspace() and c not in ".|{}?)#":
            scan.punctuation[c] = None
        i += 1
    return scan


def _boundary_edits(body: str, branches: list[int]) -> Iterator[Edit]:
    """`\\b` before an alternative that starts with something matching a word character (a group, a class, a
    letter or digit, `\\d`, `\\w`); the whitespace a verbose pattern puts there is skipped."""
    for start in branches:
        at = start
        while at < len(body) and body[at] in " \t\n":
            at += 1
        head, lookaround = body[at:at + 2], body[at:at + 3] in ("(?=", "(?!", "(?<")
        words = head[:1] in ("(", "[", "_") or head[:1].isalnum() or head in ("\\d", "\\w")
        if words and not lookaround:
            yield at, at, "\\b"


def _class_end(body: str, items: int) -> int:
    """The offset of the `]` that closes a class whose items start at `items` (a `]` first is an item)."""
    j = items + (body[items:items + 1] == "]")
    while j < len(body) and body[j] != "]":
        j += 2 if body[j] == "\\" else 1
    return j


def _class_edits(body: str, items: int, close: int, negated: bool, punctuation: dict[str, None]) -> Iterator[Edit]:
    """Drop one item of a class (not part of a range); add to a negated class a character the pattern uses
    literally elsewhere (`&([^;]+;)` -> `&([^&;]+;)`)."""
    tokens, j = [], items
    while j < close:
        size = 2 if body[j] == "\\" else 1
        tokens.append((j, size))
        j += size
    in_range = {k + d for k, (pos, size) in enumerate(tokens) if body[pos:pos + size] == "-"
                and 0 < k < len(tokens) - 1 for d in (-1, 0, 1)}
    if len(tokens) > 1:
        for k, (pos, size) in enumerate(tokens):
            if k not in in_range:
                yield pos, pos + size, ""
    if negated:
        inside = body[items:close]
        for c in punctuation:
            if c not in inside:
                yield items, items, "\\" + c if c in "]\\^-" else c


def quoted_values(feedback: str) -> list[str]:
    """The values of the string literals a failure shows, first seen first, at most MAX_QUOTED."""
    found: list[str] = []
    for match in QUOTED.finditer(feedback):
        try:
            value = ast.literal_eval(match.group(0))
        except (ValueError, SyntaxError):
            continue
        if isinstance(value, str) and value.strip():
            found.append(value)
    return list(dict.fromkeys(found))[:MAX_QUOTED]


def matching_edits(text: Text, edits: Sequence[Edit], samples: Sequence[str]) -> set[Edit]:
    """The edits of string literals after which the literal, as a pattern, finds one of `samples` that it did
    not find before."""
    if not samples or not edits:  # a function that does not parse has no edits
        return set()
    tree = ast.parse(text.source)
    literals = [(text.span(n), str(n.value)) for n in ast.walk(tree) if _is_str(n)]
    found: set[Edit] = set()
    unfound: dict[tuple[int, int], list[str]] = {}  # per literal: the samples it does not find as it is
    for edit in edits:
        inside = [(span, value) for span, value in literals if span[0] <= edit[0] and edit[1] <= span[1]]
        if not inside:
            continue
        (start, end), before = min(inside, key=lambda pair: pair[0][1] - pair[0][0])
        if (start, end) not in unfound:
            unfound[start, end] = [s for s in samples if not _finds(before, s)]
        segment = text.source[start:end]
        try:
            after = ast.literal_eval(segment[:edit[0] - start] + edit[2] + segment[edit[1] - start:])
        except (ValueError, SyntaxError):
            continue
        if isinstance(after, str) and any(_finds(after, s) for s in unfound[start, end]):
            found.add(edit)
    return found


def _finds(pattern: str, sample: str) -> bool:
    pattern = PLACEHOLDER.sub(".+?", pattern)
    flags = _compiles(pattern)
    return flags is not None and re.search(pattern, sample, flags) is not None
