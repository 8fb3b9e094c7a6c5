"""The keyword-argument family: a call that leaves out a flag its callee offers. A project function with
`strict=False` in its signature was written to be called with `strict=True` somewhere; a caller that needs it and
omits it gets the default, silently. The edit adds the flag, set against its default, to one call.

What the callees offer comes from the `def` lines of the project functions the target calls, which `fixbot fix`
puts in the target's context (bot/fix/repair/callees.py): `def load(path, strict=False): ...`.

In: the context's text, and a function's scope. Out: ("keyword", edit) pairs. Never: a keyword the call already
passes, a call with `**kwargs` (it may pass it), or a default that is not True or False (its other values are not
known)."""
from __future__ import annotations

import ast
from collections.abc import Iterator

from bot.agent.search.text import Edit, Text

Flags = tuple[tuple[str, str, bool], ...]  # (callee, keyword, its default)


def callee_flags(context: str) -> Flags:
    """The True/False keyword parameters of the functions whose `def` lines the context shows."""
    found: list[tuple[str, str, bool]] = []
    for line in context.splitlines():
        if not line.lstrip().startswith(("def ", "async def ")):
            continue
        try:
            tree = ast.parse(line.strip().split("  #")[0])
        except SyntaxError:
            continue
        for node in tree.body:
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            a = node.args
            positional = [*a.posonlyargs, *a.args]
            pairs = list(zip(positional[len(positional) - len(a.defaults):], a.defaults)) + \
                [(k, d) for k, d in zip(a.kwonlyargs, a.kw_defaults) if d is not None]
            found += [(node.name, arg.arg, d.value) for arg, d in pairs
                      if isinstance(d, ast.Constant) and isinstance(d.value, bool)]
    return tuple(found)


def _called(node: ast.Call) -> str | None:
    return node.func.id if isinstance(node.func, ast.Name) else \
        node.func.attr if isinstance(node.func, ast.Attribute) else None


def keyword_edits(text: Text, nodes: list[ast.AST], flags: Flags) -> Iterator[tuple[str, Edit]]:
    """`, flag=<not default>` added before the closing parenthesis of each call to a callee that offers it."""
    if not flags:
        return
    for node in nodes:
        if not isinstance(node, ast.Call):
            continue
        name = _called(node)
        passed = {k.arg for k in node.keywords}
        if None in passed:  # **kwargs
            continue
        for callee, keyword, default in flags:
            if callee != name or keyword in passed:
                continue
            end = text.span(node)[1] - 1  # the closing parenthesis
            if text.source[end] != ")":
                continue
            trailing = text.source[:end].rstrip().endswith(",")  # `f(a,\n)`: the comma is there
            comma = ", " if (node.args or node.keywords) and not trailing else ""
            yield "keyword", (end, end, f"{comma}{keyword}={not default}")
