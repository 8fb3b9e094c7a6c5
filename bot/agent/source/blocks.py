"""Model text -> its code blocks, and the functions in them by name: what extracting one function
(source/code.py) and extracting each function of a caller-and-helper target (source/parts.py) share."""
from __future__ import annotations

import ast
import re
import textwrap
from dataclasses import dataclass
from typing import Literal

FENCE = re.compile(r"```[ \t]*(?:python3?|py)?[ \t]*\n(.*?)(?:```|\Z)", re.S | re.I)
ExtractProblem = Literal["syntax", "signature", "missing", "edit"]  # why an answer holds no usable code (edit:
# SEARCH/REPLACE blocks that do not apply, source/edit_blocks.py)


@dataclass(frozen=True)
class Extracted:
    """A function found in model text, or the reason none could be used."""

    code: str | None
    problem: ExtractProblem | None = None
    detail: str = ""


def code_blocks(text: str) -> list[str]:
    """The fenced blocks of an answer; the whole answer too when no block holds a `def`."""
    blocks = [m.group(1) for m in FENCE.finditer(text)]
    return blocks + [text] if not blocks or "def " not in "".join(blocks) else blocks


def parsed_blocks(text: str) -> tuple[list[tuple[str, ast.Module]], SyntaxError | None]:
    """Each code block of an answer that parses, dedented, with its tree; and the first block's syntax error."""
    parsed: list[tuple[str, ast.Module]] = []
    first_error: SyntaxError | None = None
    for block in code_blocks(text):
        source = textwrap.dedent(block).strip("\n") + "\n"
        try:
            parsed.append((source, ast.parse(source)))
        except SyntaxError as exc:
            first_error = first_error or exc
    return parsed, first_error


def find_function(tree: ast.Module, name: str) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    """The top-level function (or method of a top-level class) called `name`; the last one wins."""
    found = None
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == name:
            found = node
        elif isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) and item.name == name:
                    found = item
    return found


def function_span(node: ast.FunctionDef | ast.AsyncFunctionDef) -> tuple[int, int]:
    """1-based first and last line, decorators included."""
    first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
    return first, node.end_lineno or node.lineno


def segment(source: str, node: ast.FunctionDef | ast.AsyncFunctionDef) -> str:
    """The function's lines in `source`, dedented."""
    first, last = function_span(node)
    return textwrap.dedent("\n".join(source.splitlines()[first - 1:last])) + "\n"


def syntax_detail(exc: SyntaxError) -> str:
    line = (exc.text or "").rstrip()
    return f"line {exc.lineno}: {exc.msg}" + (f"\n    {line}" if line else "")
