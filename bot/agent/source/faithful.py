"""A candidate function made faithful to the original's text: the repaired function keeps the original's docstring,
comments and untouched lines byte for byte, so that the diff shows only the fix (small models re-indent, re-quote
and drop docstrings freely).

In: the candidate (checked code from bot/agent/source/code.py) and the original. Out: the same program in the
original's text where it is the same. Never: a different program than the candidate (it falls back to the
candidate itself)."""
from __future__ import annotations

import difflib
import io
import re
import textwrap
import tokenize

from bot.agent.source.code import body_start, docstring_lines, normalized_dump
from bot.agent.source.parts import function_parts, join_parts


def _squash(line: str) -> str:
    return re.sub(r"\s+", "", line.replace('"', "'"))


def _with_original_docstring(cand: list[str], cand_code: str, orig: list[str], orig_code: str) -> list[str]:
    doc_o = docstring_lines(orig_code)
    if not doc_o:
        return cand
    doc = orig[doc_o[0] - 1:doc_o[1]]
    doc_c = docstring_lines(cand_code)
    if doc_c:
        return cand[:doc_c[0] - 1] + doc + cand[doc_c[1]:]
    start = body_start(cand_code)
    return cand[:start - 1] + doc + cand[start - 1:]


def _is_trivia(line: str) -> bool:
    stripped = line.strip()
    return not stripped or stripped.startswith("#")


def _strip_comments(code: str) -> str:
    """Remove the model's comments (tokenize knows which '#' starts one); they only widen the diff."""
    lines = code.splitlines()
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(code).readline))
    except (tokenize.TokenError, SyntaxError):
        return code
    for tok in reversed(tokens):
        if tok.type == tokenize.COMMENT:
            row, col = tok.start
            lines[row - 1] = lines[row - 1][:col].rstrip()
    return "\n".join(lines) + "\n"


def _indent_unit(lines: list[str]) -> int:
    widths = [len(x) - len(x.lstrip(" ")) for x in lines if x.strip() and x.startswith(" ")]
    return min(widths) if widths else 4


def _reindent(candidate: str, unit_to: int) -> str:
    lines = candidate.splitlines()
    unit_from = _indent_unit(lines)
    if unit_from == unit_to:
        return candidate
    out = []
    for line in lines:
        width = len(line) - len(line.lstrip(" "))
        out.append(" " * (width // unit_from * unit_to + width % unit_from) + line.lstrip(" "))
    return "\n".join(out) + "\n"


def faithful(candidate: str, original: str) -> str:
    """The candidate's behaviour in the original's text. Code lines the candidate left alone (modulo
    whitespace and quotes) and the original docstring are restored byte for byte; the original's comments and
    blank lines stay where they were, and comments the model added are dropped. Falls back to the candidate
    itself whenever the merge would not be the same program. Several functions: each part on its own."""
    parts, got = function_parts(original), function_parts(candidate)
    if parts and [n for n, _ in got] == [n for n, _ in parts]:
        return join_parts([faithful(new, old) for (_, new), (_, old) in zip(got, parts)])
    original = textwrap.dedent(original)
    orig = original.rstrip("\n").splitlines()
    try:
        reindented = _reindent(_strip_comments(candidate), _indent_unit(orig))
        if normalized_dump(reindented) == normalized_dump(candidate):
            candidate = reindented
    except SyntaxError:
        pass
    cand = _with_original_docstring(candidate.rstrip("\n").splitlines(), candidate, orig, original)
    code: list[str] = []
    trivia_before: list[list[str]] = [[]]  # trivia_before[k]: comments/blank lines just above code line k
    for line in orig:
        if _is_trivia(line):
            trivia_before[-1].append(line)
        else:
            code.append(line)
            trivia_before.append([])
    new = [line for line in cand if not _is_trivia(line)]
    merged: list[str] = []
    matcher = difflib.SequenceMatcher(None, [_squash(x) for x in code], [_squash(x) for x in new], autojunk=False)
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        for k in range(i1, i2):
            merged.extend(trivia_before[k])
            if op == "equal":
                merged.append(code[k])
        if op in ("insert", "replace"):
            merged.extend(new[j1:j2])
    merged.extend(trivia_before[len(code)])
    result = "\n".join(merged) + "\n"
    # The line merge first; when the model restructured the code (if -> elif), at least the docstring returns.
    for merged_text in (result, "\n".join(cand) + "\n"):
        try:
            if normalized_dump(merged_text) == normalized_dump(candidate):
                return merged_text
        except SyntaxError:
            pass
    return candidate if candidate.endswith("\n") else candidate + "\n"
