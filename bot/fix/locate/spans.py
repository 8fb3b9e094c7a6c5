"""Where the repairable code is in a module's text: functions and top-level assignment statements (module
constants and tables, class attributes) as spans from the AST, a best guess for a function when the module does
not parse, and a line-exact replacement of one span (`replace_span`, and `splice` by a function's name)."""
from __future__ import annotations

import ast
import difflib
import io
import re
import textwrap
import tokenize
from dataclasses import dataclass
from typing import Literal

from bot.agent.source.blocks import find_function, function_span, segment
from bot.agent.source.code import assigned_names

# str.splitlines also splits on \f, \x1c, \u2028 ...; ast and tokenize count only these three endings.
_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")
_EOL = re.compile(r"\r\n|\r|\n")
_HEADER = re.compile(r"(?P<kind>(?:async[ \t]+)?def|class)[ \t]+(?P<name>\w+)")
_AFTER = re.compile(r"after .* on line (\d+)")  # "expected an indented block after 'if' statement on line 3"
_Def = ast.FunctionDef | ast.AsyncFunctionDef
_SEPARATOR = ", "  # between the names of an assignment's qualname: `a, b`, `Cls.a, Cls.b`


SpanKind = Literal["function", "assignment"]


@dataclass(frozen=True)
class Span:
    """A function (decorators included) or an assignment statement in a module: 1-based first and last line,
    inclusive. An assignment's qualname is the name(s) it assigns, class-qualified: `_TABLE`, `Cls.attr`, `a, b`."""

    qualname: str
    start: int
    end: int
    kind: SpanKind = "function"

    @property
    def names(self) -> tuple[str, ...]:
        return names_of(self.qualname, self.kind)


def names_of(qualname: str, kind: SpanKind) -> tuple[str, ...]:
    """The qualified names a span defines: a function its own, an assignment each name it assigns."""
    return tuple(qualname.split(_SEPARATOR)) if kind == "assignment" else (qualname,)


def lines_of(source: str) -> list[str]:
    """The physical lines with their endings, numbered as ast numbers them."""
    return _LINE.findall(source)


def function_spans(source: str) -> list[Span]:
    """Every function and method (any class nesting) in source order. A function nested in a function belongs
    to its enclosing one. Raises SyntaxError when the module does not parse."""
    return [span for span in code_spans(source) if span.kind == "function"]


def code_spans(source: str) -> list[Span]:
    """The functions (as `function_spans`) and the assignment statements to plain names at module or class level
    (also under `if`/`try`/`with` there), in source order; spans never nest. Raises SyntaxError when the module
    does not parse."""
    spans: list[Span] = []

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, _Def):
                spans.append(Span(prefix + child.name, *function_span(child)))
            elif isinstance(child, ast.ClassDef):
                visit(child, f"{prefix}{child.name}.")
            elif isinstance(child, (ast.Assign, ast.AnnAssign)):
                names = assigned_names(child)
                if names:
                    qualname = _SEPARATOR.join(prefix + n for n in names)
                    spans.append(Span(qualname, child.lineno, child.end_lineno or child.lineno, "assignment"))
            elif isinstance(child, (ast.stmt, ast.excepthandler, ast.match_case)):
                visit(child, prefix)  # code under `if`/`try`/`with` at module or class level still counts

    visit(ast.parse(source), "")
    return sorted(spans, key=lambda s: s.start)


def enclosing_span(source: str, line: int) -> Span | None:
    """The function holding `line`, or None (module-level code, or the module does not parse)."""
    try:
        spans = function_spans(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    return next((s for s in spans if s.start <= line <= s.end), None)  # spans never nest


def broken_span(source: str, line: int) -> Span | None:
    """For a module that does not parse, the function whose block holds the error at `line`, found by
    indentation alone; None when the error is outside any function."""
    lines = [x.rstrip("\r\n") for x in lines_of(source)]
    if not lines:
        return None
    owner = _statement_starts(source)
    line = _culprit(source, lines, line)
    chain = _headers(lines, owner, owner.get(line, line))
    if not any(kind == "def" for kind, *_ in chain) and _indent(lines[line - 1]) > 0:
        # An indented line outside any def ("unindent does not match" in a method): the culprit is above.
        prev = next((i for i in range(line - 1, 0, -1) if _is_code(lines[i - 1])), None)
        chain = _headers(lines, owner, owner.get(prev, prev)) if prev else []
    defs = [i for i, (kind, *_) in enumerate(chain) if kind == "def"]
    if not defs:
        return None
    outer = defs[-1]  # nested functions belong to the outermost one; classes above it name it
    _, _, def_line, def_indent = chain[outer]
    qualname = ".".join(name for _, name, _, _ in reversed(chain[outer:]))
    start = def_line
    while start > 1 and lines[start - 2].strip().startswith("@") and _indent(lines[start - 2]) == def_indent:
        start -= 1
    end = def_line
    for i in range(def_line + 1, len(lines) + 1):
        text = lines[i - 1]
        if owner.get(i, i) != i:
            end = i  # a continuation line (inside brackets or a string) never ends the block
        elif _is_code(text):
            if _indent(text) <= def_indent:
                break
            end = i
    if end == def_line:  # an empty block ("expected an indented block"): the body was written unindented
        while end < len(lines) and _is_code(lines[end]) and not _HEADER.match(lines[end].lstrip()) \
                and not lines[end].lstrip().startswith("@"):
            end += 1
    return Span(qualname, start, end)


def replace_span(source: str, span: Span, new_function: str) -> str:
    """`source` with lines start..end replaced by `new_function` (dedented), indented like the span's first
    line; every other byte is kept, and the new lines use the file's line ending."""
    lines = lines_of(source)
    first, last = lines[span.start - 1], lines[span.end - 1]
    found = _EOL.search(first) or _EOL.search(source)
    eol = found.group(0) if found else "\n"
    indent = first[: len(first) - len(first.lstrip(" \t"))]
    text = textwrap.dedent(new_function.replace("\r\n", "\n").replace("\r", "\n")).rstrip("\n")
    if indent and text.startswith(indent):
        indent = ""  # dedent found no common margin (a string line at column 0): the text is indented already
    body = [indent + x if x.strip() else x for x in text.split("\n")]
    tail = last[len(last.rstrip("\r\n")):]  # "" when the span ends the file without a final newline
    old = [line.rstrip("\r\n") for line in lines[span.start - 1:span.end]]
    new = eol.join(_blank_lines_kept(old, body)) + tail
    return "".join(lines[: span.start - 1]) + new + "".join(lines[span.end:])


def _blank_lines_kept(old: list[str], new: list[str]) -> list[str]:
    """`new`, where its whitespace-only lines line up with those of `old`, with `old`'s bytes: dedenting (here, and
    where the function was cut out) empties such lines, a docstring's among them, and the diff would show them."""
    def key(line: str) -> str:
        return line if line.strip() else ""

    matcher = difflib.SequenceMatcher(None, [key(x) for x in old], [key(x) for x in new], autojunk=False)
    kept: list[str] = []
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        kept.extend(old[i1:i2] if op == "equal" else new[j1:j2])
    return kept


def splice(module: str, name: str, function_source: str) -> str:
    """`module` with the function (or method) `name`, decorators included, replaced by `function_source`."""
    node = find_function(ast.parse(module), name)
    if node is None:
        raise ValueError(f"no function {name!r} in the module")
    return replace_span(module, Span(name, *function_span(node)), function_source)


def function_source(module: str, name: str) -> str:
    """The function `name` as written in `module`, dedented, decorators included."""
    node = find_function(ast.parse(module), name)
    if node is None:
        raise ValueError(f"no function {name!r} in the module")
    return segment(module, node)


def _indent(text: str) -> int:
    return len(text.expandtabs(8)) - len(text.expandtabs(8).lstrip())


def _is_code(text: str) -> bool:
    stripped = text.strip()
    return bool(stripped) and not stripped.startswith("#")


def _culprit(source: str, lines: list[str], line: int) -> int:
    """The line to blame. Our own compiler may name an earlier line than the report (an older Python reports an
    unclosed bracket at the next statement; "expected an indented block" names its header line)."""
    try:
        compile(source, "<broken>", "exec", dont_inherit=True)
    except SyntaxError as exc:
        after = _AFTER.search(exc.msg or "")
        found = int(after.group(1)) if after else exc.lineno
        if found and 0 < found <= line:
            line = found
    except (ValueError, RecursionError, MemoryError):
        pass
    line = max(1, min(line, len(lines)))
    while line > 1 and not _is_code(lines[line - 1]):
        line -= 1  # an error at EOF or on a blank line belongs to the code above it
    while line < len(lines) and lines[line - 1].lstrip().startswith("@"):
        line += 1  # a broken decorator belongs to the function it decorates
    return line


def _headers(lines: list[str], owner: dict[int, int], line: int) -> list[tuple[str, str, int, int]]:
    """(kind, name, line, indent) of the `def`/`class` headers enclosing `line`, innermost first; `line` itself
    counts when it is a header. Any other statement at a lower indentation only narrows the search."""
    chain: list[tuple[str, str, int, int]] = []
    limit = _indent(lines[line - 1]) + 1
    for i in range(line, 0, -1):
        text = lines[i - 1]
        if owner.get(i, i) != i or not _is_code(text) or _indent(text) >= limit:
            continue
        limit = _indent(text)
        m = _HEADER.match(text.lstrip())
        if m:
            chain.append(("class" if m["kind"] == "class" else "def", m["name"], i, limit))
        if limit == 0:
            break
    return chain


def _statement_starts(source: str) -> dict[int, int]:
    """Line -> first line of its statement, for the lines of complete statements tokenize could read before
    the error; a statement cut short by the error (an unclosed bracket) claims no lines."""
    owner: dict[int, int] = {}
    start: int | None = None
    skip = {tokenize.NL, tokenize.NEWLINE, tokenize.COMMENT, tokenize.INDENT, tokenize.DEDENT, tokenize.ENDMARKER}
    try:
        for tok in tokenize.generate_tokens(io.StringIO(source).readline):
            if tok.type == tokenize.NEWLINE and start is not None:
                owner.update({row: start for row in range(start, tok.start[0] + 1)})
                start = None
            elif tok.type not in skip and start is None:
                start = tok.start[0]
    except (tokenize.TokenError, SyntaxError):
        pass
    return owner
