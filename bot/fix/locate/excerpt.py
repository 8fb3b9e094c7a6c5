"""A long function's suspicious part, repaired as a function of its own.

A small model on a CPU writes 15-20 tokens a second and must answer with the whole function: for a function of
80 lines that is a minute per answer, and past `Budgets.max_tokens_per_call` the answer is cut off and useless.
So a function longer than MAX_FUNCTION_LINES is shown to the agent as an excerpt: its def line and docstring,
then the run of sibling statements (at most MAX_EXCERPT_LINES lines) that the failing tests' evidence points at
(the lines of the traceback, per-line ochiai from per-test coverage, and the lines that use a word of the
failing assertion). The agent repairs that short function; `expand` puts its body back in place of the run, every
other byte of the function as it was, before any test runs. Without evidence inside the function (no line ran by
a failing test, none named) there is no excerpt.
"""
from __future__ import annotations

import ast
import builtins
import keyword
import math
import re
import textwrap
from collections.abc import Mapping
from dataclasses import dataclass

from bot.agent import Target
from bot.agent.search.evidence import hot_lines
from bot.agent.source.code import statement_blocks
from bot.checkout.repository import Checkout
from bot.fix.locate.rank import covered_lines
from bot.fix.types import CodeTarget, TestRun

MAX_FUNCTION_LINES = 40
MAX_EXCERPT_LINES = 24
MIN_EXCERPT_LINES = 8
PREAMBLE_LINES = 12  # of the function's lines just above the excerpt, shown to the model as context
DEFINITIONS = 3  # statements further up that bind names the excerpt reads, shown too
DEFINITION_LINES = 12  # the longest such statement shown
GAP = "# ..."  # in the preamble, between lines that are not neighbours
HOT = 3.0  # a line the traceback shows: where it failed outweighs a few lines that merely ran
NAMED = 0.5  # a line's score for using a word of the failing assertion
WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]{2,}")
COMMON = set(keyword.kwlist) | set(dir(builtins)) | {"self", "cls", "assert", "assertEqual", "assertTrue",
                                                     "assertFalse", "assertIn", "assertIs", "assertIsNone", "where"}


@dataclass(frozen=True, kw_only=True)
class Excerpt:
    whole: str  # the whole function, as the agent would have seen it (dedented)
    first: int  # the excerpt's first line in `whole`, 0-based
    stop: int  # just past its last line
    indent: str  # the excerpt's indentation in `whole`
    head: int  # lines of `whole` up to its body's first statement (decorators, def line, docstring)
    body_indent: str  # the indentation of the function's body

    @property
    def source(self) -> str:
        """The short function the agent repairs: the def line and docstring, then the excerpt as its body."""
        lines = self.whole.splitlines(True)
        body = [self._move(line, self.indent, self.body_indent) for line in lines[self.first:self.stop]]
        return "".join(lines[:self.head] + body)

    @property
    def preamble(self) -> str:
        """The function's lines above the excerpt that the model reads beside it: the statements further up that
        bind a name the excerpt reads (a table, a pattern, a helper it uses), then the lines just above it; a gap
        between them is marked `# ...`."""
        lines = self.whole.splitlines(True)
        near = max(self.head, self.first - PREAMBLE_LINES)
        picked = sorted({i for first, stop in _definitions(self.whole, self.first, self.stop, near)
                         for i in range(first, stop)} | set(range(near, self.first)))
        shown: list[str] = []
        for k, i in enumerate(picked):
            if k and i != picked[k - 1] + 1:
                shown.append(f"{self.body_indent}{GAP}\n")
            shown.append(lines[i])
        return "".join(shown)

    def expand(self, code: str) -> str:
        """The whole function with the body of `code` (a repaired excerpt) in place of the excerpt."""
        try:
            func = _function(ast.parse(code))
        except SyntaxError:
            func = None
        if func is None or not func.body or self._is_whole(code):
            return code  # not usable as it is (the tests say why), or the whole function after all
        body = _statements(func)
        lines = code.splitlines(True)
        indent = lines[body[0].lineno - 1][:body[0].col_offset]
        new = self._without_above([self._move(line, indent, self.indent) for line in lines[body[0].lineno - 1:]])
        if new and not new[-1].endswith("\n"):
            new[-1] += "\n"
        whole = self.whole.splitlines(True)
        return "".join(whole[:self.first] + new + whole[self.stop:])

    def _is_whole(self, code: str) -> bool:
        """The answer holds at least half of the function's code lines outside the excerpt that the preamble did
        not show (or, when it showed them all, of those): the model wrote the whole function rather than the
        excerpt. Repeating the preamble it read is not that."""
        lines = self.whole.splitlines()
        inside = {line.strip() for line in lines[self.first:self.stop]}
        outside = {line.strip() for line in lines[self.head:self.first] + lines[self.stop:]
                   if line.strip() and not line.strip().startswith("#")} - inside
        unshown = outside - {line.strip() for line in self.preamble.splitlines()}
        judged = unshown or outside
        said = {line.strip() for line in code.splitlines()}
        return bool(judged) and len(judged & said) >= max(1, len(judged) // 2)

    def _without_above(self, new: list[str]) -> list[str]:
        """The answer without the lines above the excerpt that it repeated at its start (the model read them in
        the context, as the preamble or as the function's lines): they are still there in the function."""
        lines = self.whole.splitlines()
        first = lines[self.first].strip()
        said = [line.strip() for line in new]
        preamble = [line.strip() for line in self.preamble.splitlines()]
        further_up = preamble[:len(preamble) - preamble[::-1].index(GAP) - 1] if GAP in preamble else []
        just_above = [line.strip() for line in lines[self.head:self.first]]
        for above in (just_above,  # the function's lines just above
                      [line for line in preamble if line != GAP],  # the preamble, as the context showed it
                      [line for line in further_up if line != GAP]):  # its definitions alone
            cut = _repeated(said, above, first, shown_apart=above is not just_above)
            if cut:
                return new[cut:]
        return new

    @staticmethod
    def _move(line: str, old: str, new: str) -> str:
        return new + line[len(old):] if line.startswith(old) and line.strip() else line


def _repeated(said: list[str], above: list[str], first: str, shown_apart: bool = False) -> int:
    """How many of the answer's first lines (stripped) repeat the end of `above`, gap markers among them included;
    a short run counts only when the excerpt's own first line follows it and, for lines the preamble showed apart
    from the excerpt (`shown_apart`), when a gap marker says it is the preamble: a short statement at the
    excerpt's top that equals one further up (`total = 0` again) may be the fix."""
    kept = [i for i, line in enumerate(said) if line != GAP]
    for k in range(min(len(above), len(kept) - 1), 0, -1):
        short_ok = said[kept[k]] == first and (not shown_apart or GAP in said[:kept[k]])
        if [said[i] for i in kept[:k]] == above[-k:] and (k >= 3 or short_ok):
            return kept[k]
    return 0


def _definitions(whole: str, first: int, stop: int, near: int) -> list[tuple[int, int]]:
    """The 0-based line ranges of the body's statements that end above line `near` and bind a name the lines
    `first` to `stop` read: the last binding of each name, at most DEFINITIONS of them, each at most
    DEFINITION_LINES long."""
    func = _function(ast.parse(whole))
    if func is None:
        return []
    read = {n.id for n in ast.walk(func) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)
            and first < n.lineno <= stop}
    found: dict[str, tuple[int, int]] = {}
    for stmt in _statements(func):
        span = (stmt.lineno - 1, stmt.end_lineno or stmt.lineno)
        if span[1] <= near and span[1] - span[0] <= DEFINITION_LINES:
            found.update((name, span) for name in _bound(stmt) & read)
    return sorted(set(found.values()))[-DEFINITIONS:]


def _bound(stmt: ast.stmt) -> set[str]:
    """The names a statement of the body binds: assigned, imported, or defined (a nested function's or class's own
    names aside)."""
    names: set[str] = set()
    todo: list[ast.AST] = [stmt]
    while todo:
        node = todo.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)  # also one defined under an `if` or a `try`
            continue
        if isinstance(node, _OWN_SCOPE):
            continue  # a comprehension's or a lambda's names are its own
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
        todo.extend(ast.iter_child_nodes(node))
    return names


_OWN_SCOPE = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp, ast.Lambda)


def _function(tree: ast.Module) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    funcs = [n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    return funcs[0] if len(funcs) == 1 else None


def _statements(func: ast.FunctionDef | ast.AsyncFunctionDef) -> list[ast.stmt]:
    """The body's statements after the docstring (a docstring alone is the body)."""
    docstring = ast.get_docstring(func, clean=False) is not None
    return func.body[1:] if docstring and len(func.body) > 1 else func.body


def line_scores(covered: Mapping[int, frozenset[str]], failing: frozenset[str], passed: frozenset[str],
                offset: int, hot: frozenset[int] | set[int], named: frozenset[int] | set[int] = frozenset()
                ) -> dict[int, float]:
    """Per line of the function (1-based; file line = line + offset): ochiai over the tests that ran it, plus HOT
    for a line the failure's traceback shows, plus NAMED for one that uses a word of the failing assertion (what
    tells lines apart when every line ran in every test)."""
    scores: dict[int, float] = {line: HOT for line in hot}
    for line in named:
        scores[line] = scores.get(line, 0.0) + NAMED
    for file_line, tests in covered.items():
        ef, ep = len(tests & failing), len(tests & passed)
        if ef and file_line > offset:
            line = file_line - offset
            scores[line] = scores.get(line, 0.0) + ef / math.sqrt(len(failing) * (ef + ep))
    return scores


def named_lines(whole: str, feedback: str) -> set[int]:
    """Lines of the function (1-based) that use a name or word of the failing assertion: the test's own lines and
    the error lines of `feedback`, the function's own lines and common words aside."""
    own = {line.strip() for line in whole.splitlines()}
    said = [line.lstrip(">E").strip() for line in feedback.splitlines() if line.startswith((">", "E "))]
    words = {w for line in said if line not in own for w in WORD.findall(line)} - COMMON
    return {i for i, line in enumerate(whole.splitlines(), 1)
            if not line.strip().startswith("#") and words & set(WORD.findall(line))}


def excerpt(whole: str, scores: Mapping[int, float]) -> Excerpt | None:
    """The run of sibling statements of at most MAX_EXCERPT_LINES lines with the highest total score (among
    equals, the shortest of at least MIN_EXCERPT_LINES: a line alone is no function to read); None for a short
    function, one that does not parse, or no evidence inside."""
    lines = whole.splitlines(True)
    if len(lines) <= MAX_FUNCTION_LINES:
        return None
    try:
        func = _function(ast.parse(whole))
    except SyntaxError:
        return None
    if func is None or not func.body:
        return None
    body = _statements(func)
    best: tuple[float, int, int, int, int] | None = None  # score, lines up to the least, -lines, first, stop
    for block in statement_blocks(body):
        for i, stmt in enumerate(block):
            for last in block[i:]:
                size = (last.end_lineno or last.lineno) - stmt.lineno + 1
                if size > MAX_EXCERPT_LINES:
                    break
                score = sum(scores.get(n, 0.0) for n in range(stmt.lineno, stmt.lineno + size))
                key = (score, min(size, MIN_EXCERPT_LINES), -size, stmt.lineno - 1, stmt.lineno - 1 + size)
                if score > 0 and (best is None or key[:3] > best[:3]):
                    best = key
    if best is None:
        return None
    first, stop = best[3], best[4]
    indent = lines[first][:len(lines[first]) - len(lines[first].lstrip())]
    docstring = func.body[0]
    head = (docstring.end_lineno or docstring.lineno) if body is not func.body else body[0].lineno - 1  # through it
    body_indent = lines[body[0].lineno - 1][:body[0].col_offset]
    found = Excerpt(whole=whole, first=first, stop=stop, indent=indent, head=head, body_indent=body_indent)
    try:
        ast.parse(found.source)
    except SyntaxError:  # a string's continuation lines that do not share the excerpt's indentation
        return None
    return found if found.expand(found.source) == whole else None


def answer_tokens(source: str, least: int) -> int:
    """A model answer's token cap for rewriting `source` whole (about 3 characters a token for code), at least
    `least`: a cap below the function's own length cuts every answer off."""
    return max(least, len(source) // 3 + 100)


def excerpt_for(root: str, files: Mapping[str, bytes], run: TestRun, target: CodeTarget, tests: frozenset[str],
                agent: Target, feedback: str) -> Excerpt | None:
    """The excerpt of a long target function that the failing `tests` point at: the lines `feedback` (its
    traceback) shows, and the lines `run`'s per-test coverage has them run more than the passing tests do."""
    if len(agent.source.splitlines()) <= MAX_FUNCTION_LINES:
        return None
    covered = covered_lines(Checkout(root, files), run, target.path)
    scores = line_scores(covered, tests, run.passed, target.start - 1, hot_lines(agent.source, feedback),
                         named_lines(agent.source, feedback))
    return excerpt(agent.source, scores)


def excerpt_context(agent: Target, part: Excerpt) -> str:
    """What the model reads around the excerpt: the module's imports, then the lines of the function above it."""
    above = textwrap.dedent(part.preamble).strip("\n")
    note = (f"# {agent.name}, lines above the part shown as the function (what binds names it reads, then the "
            f"lines just above it):\n{above}") if above else ""
    return "\n\n".join(text for text in (agent.context, note) if text)
