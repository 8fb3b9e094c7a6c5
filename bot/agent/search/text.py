"""A function's text as the mutation operators edit it: character offsets of AST nodes and of the operator tokens
between them, so that an edit replaces one span and leaves every other character as it was."""
from __future__ import annotations

import ast
import re

Edit = tuple[int, int, str]  # start, end (character offsets in the function's text), replacement


class Text:
    def __init__(self, source: str):
        self.source = source
        self.lines = source.splitlines(True)
        self.starts = [0]
        for line in self.lines:
            self.starts.append(self.starts[-1] + len(line))

    def offset(self, lineno: int, col: int) -> int:
        line = self.lines[lineno - 1]
        return self.starts[lineno - 1] + len(line.encode("utf-8")[:col].decode("utf-8", "replace"))

    def span(self, node: ast.AST) -> tuple[int, int]:
        return (self.offset(node.lineno, node.col_offset),  # type: ignore[attr-defined]
                self.offset(node.end_lineno, node.end_col_offset))  # type: ignore[attr-defined]

    def segment(self, node: ast.AST) -> str:
        start, end = self.span(node)
        return self.source[start:end]

    def line_of(self, offset: int) -> int:
        # the text's end (an insertion after the last statement) is on the last line
        return next((i for i in range(len(self.lines)) if self.starts[i + 1] > offset), len(self.lines) - 1) + 1

    def between(self, left: ast.AST, right: ast.AST, token: str) -> tuple[int, int] | None:
        """Where the operator `token` sits between two operands (parentheses and spaces around it skipped)."""
        start, end = self.span(left)[1], self.span(right)[0]
        pattern = r"\s+".join(re.escape(word) for word in token.split())
        boundary = r"(?<![\w<>=!*/])" if token[0].isalpha() or token[0] in "<>=!*/" else ""
        after = r"(?![\w=])" if token[-1].isalpha() else r"(?![=<>*/])"
        match = re.search(boundary + pattern + after, self.source[start:end])
        return (start + match.start(), start + match.end()) if match else None


def paren(text: str) -> str:
    """`text` as an operand: parenthesized unless it is a name, attribute, call or subscript."""
    return text if re.fullmatch(r"[\w.]+(\(.*\)|\[.*\])?", text, re.S) else f"({text})"
