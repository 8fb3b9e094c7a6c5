"""Failures → the project code most likely to hold the bug, best first: functions and methods, and the
top-level assignment statements of a module or a class body (a constant, a dict of lambdas, a class attribute).
A target is never test code: test files and folders, conftest.py, installed packages, and whatever lies under the
`test_roots` the caller names (the test command's paths, the failing tests' files); those can still be read as
the tests' own code.

The signals (the score shown is `100·broken + 10·frame + ochiai + 0.1·read + 0.01·named`):
- broken (0/1): a syntax error that stopped collection is inside the function; nothing runs until it is fixed.
- frame (1/(1+k)): the function is the k-th distinct project function from the deepest traceback frame, so an
  exception raised in project code points at the function that raised it (max over failures). A frame in a
  lambda of a module-level table (`in <lambda>`) points at that assignment.
- ochiai (0..1): spectrum from per-test coverage, read per line: a span scores as its most suspicious line, so
  that the branch only the failing tests take stands out in a function that every test calls (a dispatcher);
  it reaches a buggy helper that no frame names. An assignment scores as its best lambda,
  each lambda of a table being a small function of its own (the rest of the statement runs at import, outside
  any test).
- read (0..1): an assignment that a suspect function (one with a frame or a spectrum score) reads, as strong as
  its strongest reader: a module constant by its name in the same module, a class attribute as `self.a` or
  `cls.a` in a method of its class or, when the failing test names its class, in any method (a subclass's
  pattern read by its base class's matcher). It ranks such a table after the code that reads it; an
  attribute of the class the failing test names also takes NEXT times its reader's frame and ochiai terms, so
  that it comes right after its reader, before functions that merely ran in every test. An assignment of None
  alone (`params = None`, a declaration the code fills in at run time) is never read this way.
- named (0..1): the share of failures whose failing assertion (1) or, failing that, test body (0.5) calls the
  function or names the constant; it matters when an assertion fails in the test itself and there is no
  coverage.
- delegate (0/1): a function whose one statement, or each of whose most suspect lines, calls another suspect
  function that scores as high on the terms above it: a wrapper (`return all(_match_one(p, d) for p in ...)`),
  or a caller whose only line that the failing tests alone run hands the work to a helper they alone run too
  (`return apply_discount(amount, percent_for(code))`). It is what the
  test calls, so `named` would put it first, but the callee is the more precise place (and the model, shown a
  wrapper, mostly answers it unchanged): the function it delegates to goes first.
- mass: how many of the span's lines score its Ochiai; among equals, more suspect lines rank first (a helper's
  one line that every caller runs against a whole branch that only the failing tests take).
Targets are ordered lexicographically by broken, frame, ochiai, delegate, read, named and mass (then path and
line, for determinism), so a term only breaks ties of the ones before it: a helper with Ochiai 1.0 beats the
function the assertion calls (< 1.0, since a passing test runs it too), and a raising frame beats any spectrum
score.
"""
from __future__ import annotations

import ast
import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from bot.checkout.repository import Checkout
from bot.failures import Failure
from bot.fix.locate.project_files import ProjectFiles, is_target_file
from bot.fix.locate.spans import Span, broken_span
from bot.fix.types import CodeTarget, TestRun

_SYNTAX = ("SyntaxError", "IndentationError", "TabError")
_CALL = re.compile(r"(\.)?\b([A-Za-z_]\w*)\s*\(")
_PHASE = re.compile(r"\|(?:setup|run|teardown)$")  # pytest-cov's "node id|run" contexts
NEXT = 0.99  # an attribute of the class the failing test names scores just below the code that read it


@dataclass
class _Evidence:
    path: str
    span: Span
    broken: bool = False
    frame: float = 0.0
    ochiai: float = 0.0
    read: float = 0.0
    named: float = 0.0
    delegate: bool = False
    suspect_lines: tuple[int, ...] = ()  # the lines at its Ochiai
    reasons: list[str] = field(default_factory=list)

    @property
    def mass(self) -> int:
        return len(self.suspect_lines)

    def key(self) -> tuple:
        return (-self.broken, -self.frame, -self.ochiai, self.delegate, -self.read, -self.named, -self.mass,
                self.path, self.span.start)

    def suspect(self) -> bool:
        return bool(self.broken or self.frame or self.ochiai or self.read or self.named)

    def target(self) -> CodeTarget:
        score = 100.0 * self.broken + 10.0 * self.frame + self.ochiai + 0.1 * self.read + 0.01 * self.named
        return CodeTarget(self.path, self.span.qualname, self.span.start, self.span.end, round(score, 4),
                          tuple(self.reasons), self.broken, self.span.kind)


def locate(checkout: Checkout, run: TestRun, failures: Sequence[Failure], *, limit: int = 3,
           test_roots: Sequence[str] = ()) -> list[CodeTarget]:
    """The functions and assignments to repair, best first, at most `limit`, one per (path, qualname); [] when no
    project code is involved (no failures, or only tests' own mistakes). Nothing under `test_roots` (paths the
    test command names, the failing tests' files: see `folders_of_tests`) is ever a target."""
    if not failures or limit <= 0:
        return []
    files = ProjectFiles(checkout, test_roots)
    found: dict[tuple[str, str], _Evidence] = {}

    def evidence(path: str, span: Span) -> _Evidence:
        return found.setdefault((path, span.qualname), _Evidence(path, span))

    for failure in failures:
        if _is_syntax(failure):
            path = files.project_path(failure.file)
            text = files.text(path) if path else None
            span = broken_span(text, failure.line) if text is not None and failure.line else None
            if path and span:
                ev = evidence(path, span)
                ev.broken = True
                ev.reasons.append(f"{failure.error_type or 'syntax error'} at line {failure.line}")
            continue
        framed = _frames(files, failure)
        for k, (path, span) in enumerate(framed):
            ev = evidence(path, span)
            if 1 / (1 + k) > ev.frame:
                ev.frame = 1 / (1 + k)
                ev.reasons.append("raised here (deepest project frame)" if k == 0 else f"traceback frame {k + 1}")
        if not framed:
            for path, span, weight in _named(files, failure):
                ev = evidence(path, span)
                ev.named += weight / len(failures)
                if f"called by {failure.test_id}" not in ev.reasons:
                    ev.reasons.append(f"called by {failure.test_id}")
    failing = frozenset(f.test_id for f in failures)
    for path, span, (score, ef, ep, _), top, where in _spectrum(files, run, failing):
        ev = evidence(path, span)
        ev.ochiai, ev.suspect_lines = score, top
        ev.reasons.append(f"ochiai {score:.2f} ({ef} failing, {ep} passing tests ran {where})")
    classes = {name for f in failures if not _is_syntax(f) for part in _test_reads(files, f)[:2] for _, name in part}
    for path, span, reader, direct in _read_by(files, list(found.values()), classes):
        ev = evidence(path, span)
        strength = (10 * reader.frame + reader.ochiai) / 11
        if strength > ev.read:
            ev.read = strength
            ev.reasons.append(f"read by {reader.span.qualname}")
        if direct:  # the test's own class's attribute, read by the code it ran: right after that code
            ev.frame, ev.ochiai = max(ev.frame, reader.frame * NEXT), max(ev.ochiai, reader.ochiai * NEXT)
    suspects = [e for e in found.values() if e.suspect()]
    _mark_delegates(files, suspects)
    ranked = sorted(suspects, key=_Evidence.key)
    return [e.target() for e in ranked[:limit]]


def _mark_delegates(files: ProjectFiles, suspects: list[_Evidence]) -> None:
    """Set `delegate` on each function whose one statement, or each of whose most suspect lines, calls a suspect
    function at least as strong as itself (see `delegate` above)."""
    functions = [e for e in suspects if e.span.kind == "function"]
    for ev in functions:
        strong = (ev.broken, ev.frame, ev.ochiai)
        callees = {other.span.qualname.rsplit(".", 1)[-1] for other in functions
                   if other is not ev and (other.broken, other.frame, other.ochiai) >= strong}
        if callees & _delegates_to(files, ev.path, ev.span):
            ev.delegate = True
            ev.reasons.append("a one-statement wrapper of a suspect function")
        elif ev.suspect_lines and all(callees & _calls_on(files, ev.path, ev.span, line) for line in ev.suspect_lines):
            ev.delegate = True
            ev.reasons.append("its most suspect lines call a suspect function")


def _delegates_to(files: ProjectFiles, path: str, span: Span) -> frozenset[str]:
    """The names a function calls when its body (after any docstring) is one `return` or expression statement,
    else nothing."""
    node = files.function(path, span)
    body = node.body if node else []
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
            and isinstance(body[0].value.value, str):
        body = body[1:]
    if len(body) != 1 or not isinstance(body[0], (ast.Return, ast.Expr)):  # `try:` is one statement too
        return frozenset()
    return frozenset(kind_name[1] for kind_name in _names(body) if kind_name[0] in ("name", "attr"))


def _calls_on(files: ProjectFiles, path: str, span: Span, line: int) -> frozenset[str]:
    """The names of the functions a function calls on one of its lines."""
    node = files.function(path, span)
    calls = [n.func for n in ast.walk(node) if isinstance(n, ast.Call)
             and n.lineno <= line <= (n.end_lineno or n.lineno)] if node else []
    return frozenset(f.id if isinstance(f, ast.Name) else f.attr for f in calls
                     if isinstance(f, (ast.Name, ast.Attribute)))


def _is_syntax(failure: Failure) -> bool:
    return failure.error_type in _SYNTAX or any(f"{t}:" in (failure.message or "") for t in _SYNTAX)


def _frames(files: ProjectFiles, failure: Failure) -> list[tuple[str, Span]]:
    """The distinct project functions on the traceback, deepest first."""
    out: list[tuple[str, Span]] = []
    for frame in reversed(failure.traceback):
        path = files.project_path(frame.path)
        span = files.enclosing(path, frame.line) if path else None
        if path and span and (path, span) not in out:
            out.append((path, span))
    return out


def _read_by(files: ProjectFiles, suspects: list[_Evidence], classes: set[str]
             ) -> list[tuple[str, Span, _Evidence, bool]]:
    """(path, assignment, reader, direct) for the assignments the suspect functions read (see `read` above);
    `classes`: the names the failing tests' code reads; `direct`: an attribute of such a class. An attribute of a
    class the test names shadows the reader's own class's attribute of that name (`cls._VALID_URL` is the
    subclass's)."""
    out = []
    readers = [ev for ev in suspects if ev.span.kind == "function" and (ev.frame or ev.ochiai)]
    defining = re.compile(r"^[ \t]*class[ \t]+(?:" + "|".join(map(re.escape, sorted(classes))) + r")\b", re.M)
    with_class = [p for p in files.project if classes and readers and defining.search(files.text(p) or "")]
    for ev in readers:
        names, attrs = files.reads(ev.path, ev.span)
        owner = ev.span.qualname.rpartition(".")[0]
        places = [ev.path] + ([p for p in with_class if p != ev.path] if attrs else [])
        assigned = [(path, span, [q.rpartition(".") for q in span.names]) for path in places
                    for span, _ in files.spans(path) if span.kind == "assignment" and not files.placeholder(path, span)]
        named = [(path, span) for path, span, parts in assigned
                 if any(cls.rpartition(".")[2] in classes and attr in attrs for cls, _, attr in parts)]
        shadowed = {attr for path, span, parts in assigned if (path, span) in named for _, _, attr in parts}
        own = [(path, span) for path, span, parts in assigned if path == ev.path and any(
            (not cls and attr in names) or (cls and cls == owner and attr in attrs - shadowed)
            for cls, _, attr in parts)]
        out += [(path, span, ev, (path, span) in named) for path, span in dict.fromkeys(named + own)]
    return out


def _test_reads(files: ProjectFiles, failure: Failure) -> tuple[set[tuple[str, str]], set[tuple[str, str]], set[str]]:
    """What the test's code reads where it failed (the statement at each frame in test code: the test, then any
    helper of its that asserted), what it read before that point, and the project files it imports."""
    sites = [(f.path, f.line) for f in failure.traceback] or [(failure.file or "", failure.line or 0)]
    direct: set[tuple[str, str]] = set()
    before: set[tuple[str, str]] = set()
    imported: set[str] = set()
    for raw, line in sites:
        path = files.relative(raw) if raw else None
        tree = files.tree(path) if path and not is_target_file(path, files.roots) else None
        if tree is not None and path:
            stmt, rest = _failing_code(tree, line)
            direct |= _names([stmt]) if stmt else set()
            before |= _names(rest)
            imported |= _imported(files, path, tree)
    return direct, before, imported


def _named(files: ProjectFiles, failure: Failure) -> list[tuple[str, Span, float]]:
    """Project code called or read where the test failed (weight 1), else in the assertion pytest printed; then
    what the rest of the test called before that point (0.5)."""
    direct, before, imported = _test_reads(files, failure)
    if not direct:  # no test source to read: the assertion text, as code or, if cut short, by pattern
        direct = _names_in_text(failure.assertion or "")
    out: dict[tuple[str, str], tuple[str, Span, float]] = {}
    for weight, names in ((1.0, direct), (0.5, before - direct)):
        for path, span in _resolve(files, names, imported):
            out.setdefault((path, span.qualname), (path, span, weight))
    return list(out.values())


def _failing_code(tree: ast.Module, line: int) -> tuple[ast.stmt | None, list[ast.stmt]]:
    """The innermost statement at `line` and the statements before it in the same test function."""
    stmts = [n for n in ast.walk(tree) if isinstance(n, ast.stmt) and n.lineno <= line <= (n.end_lineno or n.lineno)]
    simple = [n for n in stmts if not isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))]
    stmt = min(simple, key=lambda n: (n.end_lineno or n.lineno) - n.lineno, default=None)
    funcs = [n for n in stmts if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    func = min(funcs, key=lambda n: (n.end_lineno or n.lineno) - n.lineno, default=None)
    rest = [n for n in ast.walk(func) if isinstance(n, ast.stmt) and n is not func and n.lineno < line] if func else []
    return stmt, rest


def _names(nodes: Iterable[ast.AST]) -> set[tuple[str, str]]:
    """("name", f) for `f(...)`, ("attr", m) for `x.m(...)` and `x.m` (a property reads like an attribute),
    ("ref", c) for any other name read (a constant: `TABLE["k"]`)."""
    out: set[tuple[str, str]] = set()
    for node in nodes:
        for n in ast.walk(node):
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Name):
                out.add(("name", n.func.id))
            elif isinstance(n, ast.Attribute):
                out.add(("attr", n.attr))
            elif isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load):
                out.add(("ref", n.id))
    return out


def _names_in_text(text: str) -> set[tuple[str, str]]:
    try:
        return _names([ast.parse(text.strip())])
    except SyntaxError:
        return {("attr" if dot else "name", name) for dot, name in _CALL.findall(text)}


def _defines(span: Span, kind: str, name: str) -> bool:
    """`f(...)` → a module-level `f` (a function, or a name bound to a lambda) or class `f`'s `__init__`; `.m` →
    any `m`; a name read → a module-level assignment to it."""
    if span.kind == "function":
        return (kind == "attr" and span.qualname.rsplit(".", 1)[-1] == name) or \
            (kind == "name" and span.qualname in (name, f"{name}.__init__"))
    return (kind == "attr" and any(q.rsplit(".", 1)[-1] == name for q in span.names)) or \
        (kind in ("name", "ref") and name in span.names)


def _resolve(files: ProjectFiles, names: set[tuple[str, str]], imported: set[str]) -> list[tuple[str, Span]]:
    """Definitions matching the names (`_defines`). Where several share a name, those in modules the test
    imports win; a bare name read (not called) counts only there: a test reads many names of its own."""
    out: list[tuple[str, Span]] = []
    for kind, name in sorted(names):
        matches = [(path, span) for path in files.project for span, _ in files.spans(path)
                   if _defines(span, kind, name) and (kind != "ref" or path in imported)]
        preferred = [m for m in matches if m[0] in imported]
        out.extend(preferred if len(matches) > 1 and preferred else matches)
    return out


def _imported(files: ProjectFiles, test: str, tree: ast.Module) -> set[str]:
    """Project files the test module imports (absolute or relative; src layouts match by dotted suffix)."""
    modules: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            modules.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            package = test.split("/")[:-1]
            base = ".".join([*package[: len(package) - node.level + 1], node.module or ""]) if node.level \
                else node.module or ""
            base = base.strip(".")
            modules.add(base)
            modules.update(f"{base}.{a.name}".strip(".") for a in node.names)
    dotted = {p: p.removesuffix(".py").removesuffix("/__init__").replace("/", ".") for p in files.project}
    return {p for p, d in dotted.items() if any(m and (d == m or d.endswith("." + m)) for m in modules)}


def covered_lines(checkout: Checkout, run: TestRun, path: str) -> dict[int, frozenset[str]]:
    """Line of `path` -> node ids of the tests that ran it (coverage's paths resolved as for ranking); empty when
    the run measured no coverage."""
    files = ProjectFiles(checkout)
    for raw, lines in (run.coverage or {}).items():
        if files.relative(raw) == path:
            return {n: frozenset(_PHASE.sub("", t) for t in ids) for n, ids in lines.items()}
    return {}


def _spectrum(files: ProjectFiles, run: TestRun, failing: frozenset[str]
              ) -> list[tuple[str, Span, tuple[float, int, int, int], tuple[int, ...], str]]:
    """Per project span that a failing test executed: its most suspicious line's Ochiai, failed(l) /
    sqrt(total_failed · executed(l)), with that line's failing and passing counts and number, the lines that score
    that high, and which lines those are in words ("it" when all it ran). A line, not the whole
    function: a branch that only the failing tests take stands out in a function that every test calls.
    `failing`: the tests being repaired; other tests that failed (set aside: the network, the environment, tests
    a CI log does not name) count neither way, or they would point at the code they share."""
    failing = failing & run.failed
    if not run.coverage or not failing:
        return []
    out = []
    for raw, lines in sorted(run.coverage.items()):
        path = files.project_path(raw)
        if path is None:
            continue
        for span, groups in files.spans(path):
            scores = [(*s, n) for group in groups for n in group
                      if (s := _ochiai(run, failing, lines.get(n, ())))]
            if scores:
                best = max(scores, key=lambda s: (s[0], -s[3]))  # the first line of the best ones
                top = tuple(s[3] for s in scores if s[0] == best[0])
                out.append((path, span, best, top, "it" if len(top) == len(scores) else
                            f"line {best[3]}" + (f" and {len(top) - 1} more as suspect" if len(top) > 1 else "")))
    return out


def _ochiai(run: TestRun, failing: frozenset[str], ran: Iterable[str]) -> tuple[float, int, int] | None:
    """Ochiai of a line run by the tests `ran` (coverage's context names), None when no failing test ran it."""
    tests = {_PHASE.sub("", t) for t in ran}
    ef, ep = len(tests & failing), len(tests & run.passed)
    return (ef / math.sqrt(len(failing) * (ef + ep)), ef, ep) if ef else None
