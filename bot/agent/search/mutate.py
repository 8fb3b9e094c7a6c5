"""One-edit mutants of a function: the bugs a small model leaves (or a human makes) are often one token away.

Every mutant is the function's own text with one span replaced, so that untouched characters (docstring,
comments, spacing) stay byte for byte and the diff shows one edit. Operators, in the order they are tried: when
the search knows the failure (`ranked_mutants`), a None it shows used as an object skipped where the traceback
shows it (`if x is None: continue`, or a comprehension's `if x is not None`), a statement the traceback shows
raising a builtin exception wrapped in try/except, and parameters decoded from bytes when the failure shows bytes
given; then the families of bot/agent/search/operators.py in the order of its `OPERATORS`:
comparison, arithmetic and boolean operator swaps; dropped
operands; constants +-1, then every bool negated at once; edits of regular expressions (bot/agent/search/regex.py);
missing None checks (bot/agent/search/guards.py); swapped calls from small families (min/max, any/all, ...), a
sort reversed; +-1 on range/slice/index bounds; removed or inserted `not`/`-`/`abs`; another variable of the same
scope, or another call's argument; swapped arguments; the middle operand of a chain dropped (`(-1) ** 2 * n` ->
`(-1) ** n`); edits of string literals (bot/agent/search/strings.py); a deleted statement. `rank` puts the lines
the failure names first and caps the list. An assignment target (a table of lambdas, a constant) gets the same edits
of its value, except deleting the statement: that would drop the name it defines. A target of several functions
gets the edits of each function, one at a time.
"""
from __future__ import annotations

import ast
from collections.abc import Iterable
from dataclasses import dataclass

from bot.agent.search.decoding import UNICODE_ERRORS, bytes_edits, encoding_edits
from bot.agent.search.evidence import NO_EVIDENCE, Evidence
from bot.agent.search.guards import except_edits, filter_edits, skip_edits
from bot.agent.search.keywords import keyword_edits
from bot.agent.search.names import import_edits, rename_edits
from bot.agent.search.operators import scope_edits, scope_names
from bot.agent.search.regex import matching_edits
from bot.agent.search.text import Edit, Text
from bot.agent.source.blocks import find_function
from bot.agent.source.code import assigned_names, code_hash
from bot.agent.source.parts import function_parts

# made only for code the traceback shows, though the edit may land on a later line (a comprehension's `]`)
SHOWN_ONLY = frozenset({"skip-none"})


@dataclass(frozen=True)
class Mutant:
    source: str  # the whole function with one edit applied
    operator: str  # which family of edit, e.g. "compare", "constant"
    line: int  # 1-based line of the function where the edit starts
    description: str  # for people: "line 4: `<` -> `<=`"


def _apply(source: str, edit: Edit) -> str:
    start, end, new = edit
    return source[:start] + new + source[end:]


def _raw_edits(function_source: str, name: str, evidence: Evidence = NO_EVIDENCE
               ) -> tuple[Text, list[tuple[str, tuple[int, int, str]]]]:
    """Every one-edit change of the function (or assignment, or caller and helper), unchecked, in operator order;
    first the edits only some failures call for, as `evidence` says: undefined names (NameError) imported when
    they are standard-library modules or replaced by bound ones; a None used as an object skipped where the
    traceback shows it; statements that raised a builtin exception there wrapped in try/except; the border of
    str and bytes when the failure shows bytes (mutate_bytes)."""
    scopes = _scopes(function_source, name)
    text, hot, undefined = Text(function_source), evidence.hot_lines, list(evidence.undefined)
    renamed = [("import", e) for scope in scopes for e in import_edits(text, scope, undefined)] + \
        [("undefined", e) for scope in scopes
         for e in rename_edits(text, scope, undefined, scope_names(scope))] if undefined else []
    skipped = _skipped(text, scopes, evidence)
    caught = [("except", e) for scope in scopes for e in except_edits(text, scope, hot, list(evidence.exceptions))]
    border = [e for scope in scopes for e in bytes_edits(text, scope)] if evidence.bytes_shown else []
    encoded = [e for scope in scopes for e in encoding_edits(text, scope)] \
        if UNICODE_ERRORS & set(evidence.exceptions) else []  # before `caught`: a fix, not a swallowed error
    flagged = [e for scope in scopes for e in keyword_edits(text, list(ast.walk(scope)), evidence.flags)]
    return text, renamed + skipped + encoded + caught + border + flagged + \
        [e for scope in scopes for e in scope_edits(text, scope)]


def _scopes(function_source: str, name: str) -> list[ast.FunctionDef | ast.AsyncFunctionDef | ast.Module]:
    """What the edits may touch: the function, the assignments of a target that is one, or a caller and its
    helper (one edit in one of them); nothing when the source does not parse."""
    try:
        tree = ast.parse(function_source)
    except SyntaxError:
        return []
    func: ast.FunctionDef | ast.AsyncFunctionDef | ast.Module | None = find_function(tree, name)
    if func is None and tree.body and all(assigned_names(n) for n in tree.body):
        func = tree
    if func is None and function_parts(function_source):
        return [n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    return [func] if func is not None else []


def _skipped(text: Text, scopes: list[ast.FunctionDef | ast.AsyncFunctionDef | ast.Module],
             evidence: Evidence) -> list[tuple[str, Edit]]:
    """A None, or an empty string, skipped where the traceback shows it used."""
    hot = evidence.hot_lines
    skipped = [("skip-none", e) for scope in scopes for e in skip_edits(text, scope, hot, list(evidence.nones))]
    return skipped + [("skip-none", e) for scope in scopes for condition in evidence.skip_conditions()
                      for e in filter_edits(text, scope, hot, condition)]


def _checked(function_source: str, text: Text, edits: Iterable[tuple[str, Edit]], seen: set[str],
             limit: int | None) -> list[Mutant]:
    """The edits that parse and give code not seen yet, in the given order, at most `limit` of them."""
    found: list[Mutant] = []
    for operator, edit in edits:
        if limit is not None and len(found) >= limit:
            break
        candidate = _apply(function_source, edit)
        try:
            ast.parse(candidate)
            key = code_hash(candidate)
        except SyntaxError:
            continue
        if key in seen:
            continue
        seen.add(key)
        line = text.line_of(edit[0])
        old = function_source[edit[0]:edit[1]]
        found.append(Mutant(candidate, operator, line, f"line {line}: `{_short(old)}` -> `{_short(edit[2])}`"))
    return found


def mutants(function_source: str, name: str, exclude: frozenset[str] = frozenset()) -> list[Mutant]:
    """Every distinct one-edit mutant that parses, keeps the function's name (an assignment target: the names it
    assigns), and differs from the original and from the code whose hashes are in `exclude` (already tested)."""
    text, edits = _raw_edits(function_source, name)
    return _checked(function_source, text, edits, {code_hash(function_source), *exclude}, None)


def ranked_mutants(function_source: str, name: str, exclude: frozenset[str] = frozenset(), cap: int = 400,
                   evidence: Evidence = NO_EVIDENCE) -> list[Mutant]:
    """`rank(mutants(...), evidence.hot_lines, cap)` without building the rest, plus the edits `evidence` calls
    for: the edits are ordered first (pattern edits that make a pattern find a string the failure quotes, lines
    the failure names, then the operators' own order) and only checked
    (parsed, hashed) until `cap` are found. A long function has thousands of edits; parsing and hashing each was
    most of a search's time."""
    text, edits = _raw_edits(function_source, name, evidence)
    order: dict[str, int] = {}
    for operator, _edit in edits:
        order.setdefault(operator, len(order))
    matching = matching_edits(text, [e for operator, e in edits if operator == "regex"], evidence.quoted)
    ordered = sorted(edits, key=lambda e: (e[1] not in matching, e[0] not in SHOWN_ONLY
                                           and text.line_of(e[1][0]) not in evidence.hot_lines, order[e[0]]))
    return _checked(function_source, text, ordered, {code_hash(function_source), *exclude}, cap)


def skip_mutants(function_source: str, name: str, exclude: frozenset[str], evidence: Evidence) -> list[Mutant]:
    """Only the edits that skip a None or an empty string where `evidence` shows one used: the second edit of a
    mutant whose failure moved there (bot/agent/search/rounds.py)."""
    text = Text(function_source)
    return _checked(function_source, text, _skipped(text, _scopes(function_source, name), evidence),
                    {code_hash(function_source), *exclude}, None)


def _short(text: str, limit: int = 40) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def rank(found: list[Mutant], hot_lines: set[int] = frozenset(), cap: int = 400) -> list[Mutant]:  # type: ignore[assignment]
    """Lines the failure names first, then the operators' own order (cheapest and likeliest first); capped."""
    order = {m.operator: i for i, m in reversed(list(enumerate(found)))}
    ordered = sorted(found, key=lambda m: (m.line not in hot_lines, order[m.operator]))
    return ordered[:cap]
