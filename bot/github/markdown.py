"""Markdown primitives that keep untrusted text inert on GitHub.

Text from the repository (test ids, assertions, the diff) and from the model (the explanation) may hold
`@mentions` that would notify people, raw HTML, or backtick runs that close our code block early. GitHub renders
neither mentions nor HTML inside code, so such text goes only into code spans and fences whose backtick run is
longer than any run inside it; the little prose that must carry it (the title, a commit message) gets `@`
neutralised instead."""
from __future__ import annotations

import re

_BACKTICKS = re.compile(r"`+")
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_ZWSP = "\u200b"
_SAFE_URL = re.compile(r"^https?://[^\s()<>\[\]`\"']+$")


def clean(text: str) -> str:
    """One line-ending convention, no NUL or other control characters (a lone CR ends a line in CommonMark)."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    return _CONTROL.sub("\ufffd", text)


def _longest_run(text: str) -> int:
    return max((len(m) for m in _BACKTICKS.findall(text)), default=0)


def fence(text: str, lang: str = "") -> str:
    """A fenced code block that no content can close: its fence is longer than every backtick run inside."""
    body = clean(text).rstrip("\n")
    ticks = "`" * max(3, _longest_run(body) + 1)
    return f"{ticks}{lang}\n{body}\n{ticks}"


def code(text: str, *, in_table: bool = False, limit: int = 300) -> str:
    """An inline code span. Whitespace is collapsed: a blank line inside would end the span and let the rest
    render as Markdown. In a table cell `|` is escaped, or it would split the cell (GFM honours `\\|` in spans).
    Longer than `limit` characters (a parametrized test id can be huge) it is cut with an ellipsis."""
    body = " ".join(clean(text).split())
    if not body:
        return "(empty)"
    if len(body) > limit:
        body = body[: limit - 1] + "…"
    if in_table:
        body = body.replace("|", "\\|")
    runs = {len(m) for m in _BACKTICKS.findall(body)}
    n = 1
    while n in runs:
        n += 1
    pad = " " if body.startswith("`") or body.endswith("`") else ""
    return f"{'`' * n}{pad}{body}{pad}{'`' * n}"


def plain(text: str, limit: int | None = None) -> str:
    """One line of plain text for places that are not code (titles, commit messages): mentions broken with a
    zero-width space, control characters gone, whitespace collapsed, optionally cut to `limit` characters."""
    line = " ".join(clean(text).split()).replace("@", "@" + _ZWSP)
    if limit is not None and len(line) > limit:
        line = line[: limit - 1].rstrip() + "…"
    return line


def link(label: str, url: str | None) -> str:
    """A Markdown link when `url` is a plain http(s) URL; otherwise the URL as code (never raw Markdown)."""
    if url and _SAFE_URL.match(url):
        return f"[{label}]({url})"
    return f"{label} {code(url)}" if url else label


def clip(text: str, limit: int, what: str = "characters") -> str:
    """`text` cut to `limit` characters with a note saying so (callers fence the result, so the note is inert)."""
    text = clean(text)
    if len(text) <= limit:
        return text
    return text[:limit].rstrip() + f"\n… ({len(text) - limit} more {what} not shown)"
