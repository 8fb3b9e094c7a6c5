"""Patches that make a failing test pass without fixing the code: the anti-patterns program-repair research names
(Tan et al., FSE 2016), read by comparing a function before and after a candidate's change.

One rule per class of wrong fix:
  swallows-exception   an `except` handler added whose body does nothing (`pass`, `continue`, a bare or constant
                       `return`): the failure is hidden, not fixed (the accepted patch that wraps a recursive call
                       in `try: ... except RecursionError: pass`);
  early-exit           a `return` of a constant added as the body's first statement: the function no longer does
                       what it did for any input;
  special-cases-test   an `if` added that checks an argument for equality with a literal the failing tests use
                       and the function did not, and whose body returns a literal: the fix answers the test's
                       input, not the bug (a new branch that computes its answer, or a threshold like
                       `count > 2`, is how many real bugs are fixed, and is not named);
  deletes-check        a `raise` or `assert` of the function removed: the path the failure points at, deleted
                       (a stub's `raise NotImplementedError`, which an implementation replaces, is not a check);
  deletes-loop-update  an assignment to a name a `while` loop's test reads removed from the loop's body;
  deletes-guard        the change is a guard clause's `return` (`if ...: return ...`, alone in its body)
                       deleted and nothing else: its body turned to `pass`, or the `if` removed (a special
                       case, `if n == 2: return 2`, is no guard; a rewrite that also changes other code is not
                       read as one). Tan et al.'s "delete a CFG exit node": the input the guard turned away now
                       runs on.
  shadows-branch       an `if`/`elif` test changed so that it now holds for every value a later `elif` of the same
                       chain takes (`elif c == '\n'` after `if c == ' '` became `if c <= ' '`), which it did not
                       before: that branch can no longer run, its path deleted without deleting its code.

In: the function's source before and after (one span, dedented or not), and the failing tests' source. Out: the
rules the change breaks, in this order. Never: a judgement of the change's correctness otherwise; a rule fires only
on what the change adds or removes, never on what the function already had."""
from __future__ import annotations

import ast
import copy
import textwrap
from collections import Counter
from collections.abc import Iterable

RULES = ("swallows-exception", "early-exit", "special-cases-test", "deletes-check", "deletes-loop-update",
         "deletes-guard", "shadows-branch")
WHY = {  # each rule's class of wrong fix, as the model is told when its candidate is refused
    "swallows-exception": "it catches an exception and does nothing with it, which hides the failure instead of "
                          "fixing its cause",
    "early-exit": "it returns a constant before the function does its work",
    "special-cases-test": "it adds a condition on a value from the failing test that returns a fixed answer, which "
                          "answers that input instead of fixing the bug",
    "deletes-check": "it deletes a `raise` or `assert`, the path the failure points at, instead of fixing why it "
                     "is reached",
    "deletes-loop-update": "it deletes the update of a variable the loop's condition reads",
    "deletes-guard": "it deletes a guard's `return`, so the input the guard turned "
                     "away now runs on, instead of fixing what that input gets wrong",
    "shadows-branch": "its condition now also takes the values a later `elif` handles, so that branch can no "
                      "longer run",
}
Function = ast.FunctionDef | ast.AsyncFunctionDef


def _parse(source: str) -> ast.Module | None:
    try:
        return ast.parse(textwrap.dedent(source))
    except (SyntaxError, ValueError):
        return None


def _function(tree: ast.Module) -> Function | None:
    return next((n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))), None)


def _literal(node: ast.expr | None) -> bool:
    """None (a bare return), a constant, or a container of literals: a value that depends on nothing."""
    if node is None or isinstance(node, ast.Constant):
        return True
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        return all(_literal(e) for e in node.elts)
    if isinstance(node, ast.Dict):
        return all(k is not None and _literal(k) for k in node.keys) and all(_literal(v) for v in node.values)
    return False


def _inert(body: list[ast.stmt]) -> bool:
    """A handler's body that does nothing with the exception."""
    def one(stmt: ast.stmt) -> bool:
        if isinstance(stmt, (ast.Pass, ast.Continue)):
            return True
        if isinstance(stmt, ast.Return):
            return _literal(stmt.value)
        return isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant)  # `...`, a docstring
    return all(one(s) for s in body)


def _dumps(nodes: Iterable[ast.AST]) -> Counter[str]:
    return Counter(ast.dump(n) for n in nodes)


def _handlers(tree: ast.AST) -> list[ast.ExceptHandler]:
    return [n for n in ast.walk(tree) if isinstance(n, ast.ExceptHandler)]


def _constants(tree: ast.AST) -> list[object]:
    return [n.value for n in ast.walk(tree) if isinstance(n, ast.Constant)]


def _swallows(before: ast.AST, after: ast.AST) -> bool:
    old = _dumps(_handlers(before))
    return any(_inert(h.body) for h in _handlers(after) if old[ast.dump(h)] == 0)


def _first(f: Function) -> ast.stmt | None:
    body = [s for s in f.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
    return body[0] if body else None


def _early_exit(before: Function, after: Function) -> bool:
    new, old = _first(after), _first(before)
    if not isinstance(new, ast.Return) or not _literal(new.value):
        return False
    return old is None or ast.dump(old) != ast.dump(new)


def _test_literals(tests: str) -> set[object]:
    tree = _parse(tests)
    if tree is None:
        return set()
    return {v for v in _constants(tree) if isinstance(v, (str, int, float, bytes)) and not isinstance(v, bool)
            and v not in ("", 0, 1)}


def _returns_literal(body: list[ast.stmt]) -> bool:
    first = next((s for s in body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))), None)
    return isinstance(first, ast.Return) and _literal(first.value)


def _parameters(f: Function | None) -> set[str]:
    if f is None:
        return set()
    a = f.args
    return {p.arg for p in (*a.posonlyargs, *a.args, *a.kwonlyargs, a.vararg, a.kwarg) if p is not None}


def _matches_input(compare: ast.Compare, parameters: set[str]) -> bool:
    """`param == literal`, `param is ...`, `param in (...)`: an argument checked for being one value (a threshold,
    `count > 2`, is a rule of the function, not a test's input)."""
    return all(isinstance(op, (ast.Eq, ast.Is, ast.In)) for op in compare.ops) and any(
        isinstance(n, ast.Name) and n.id in parameters for side in (compare.left, *compare.comparators)
        for n in ast.walk(side))


def _special_cases(before: ast.Module, after: ast.Module, tests: str) -> bool:
    literals = _test_literals(tests)
    if not literals:
        return False
    had = set(_constants(before))
    parameters = _parameters(_function(after))
    old = _dumps(n.test for n in ast.walk(before) if isinstance(n, ast.If))
    for node in ast.walk(after):
        if not isinstance(node, ast.If) or old[ast.dump(node.test)] or not _returns_literal(node.body):
            continue
        for compare in (n for n in ast.walk(node.test) if isinstance(n, ast.Compare)):
            if _matches_input(compare, parameters) and any(
                    v in literals and v not in had for v in _constants(compare)
                    if isinstance(v, (str, int, float, bytes))):
                return True
    return False


def _placeholder(node: ast.AST) -> bool:
    """`raise NotImplementedError(...)`: a stub's body, which an implementation replaces, not a check."""
    if not isinstance(node, ast.Raise) or node.exc is None:
        return False
    raised = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
    return isinstance(raised, ast.Name) and raised.id == "NotImplementedError"


def _checks(tree: ast.AST) -> Counter[str]:
    return _dumps(n for n in ast.walk(tree) if isinstance(n, (ast.Raise, ast.Assert)) and not _placeholder(n))


def _deletes_check(before: ast.AST, after: ast.AST) -> bool:
    old, new = _checks(before), _checks(after)
    return bool(old - new) and sum(new.values()) < sum(old.values())


def _loop_updates(tree: ast.AST) -> Counter[str]:
    """How many times each `while` body assigns each name its loop's test reads (changing the update is not
    deleting it)."""
    found: Counter[str] = Counter()
    for loop in (n for n in ast.walk(tree) if isinstance(n, ast.While)):
        names = {n.id for n in ast.walk(loop.test) if isinstance(n, ast.Name)}
        for node in (m for stmt in loop.body for m in ast.walk(stmt)):
            targets = [node.target] if isinstance(node, ast.AugAssign) else \
                node.targets if isinstance(node, ast.Assign) else []
            found.update(t.id for t in targets if isinstance(t, ast.Name) and t.id in names)
    return found


def _special_case(node: ast.If, parameters: set[str]) -> bool:
    """`if n == 2: return 2`: a literal answer for one literal value of an argument. Deleting it is how a wrong
    special case is fixed (special-cases-test's converse), and it lets on one input, not a class of them."""
    compares = [n for n in ast.walk(node.test) if isinstance(n, ast.Compare)]
    return bool(compares) and _returns_literal(node.body) and all(
        _matches_input(c, parameters) and any(isinstance(s, ast.Constant) for s in c.comparators) for c in compares)


def _deletes_guard(before: ast.Module, after: ast.Module) -> bool:
    """The change is exactly a guard deleted: `after` is `before` with one guard's body turned to `pass`, or
    with the guard's `if` removed (or turned to `pass`, where it was alone in its block). A rewrite that also
    changes other code is not read as one (a correct rewrite may fold a guard into an expression)."""
    parameters = _parameters(_function(before))
    guards = [n for n in ast.walk(before) if isinstance(n, ast.If) and not n.orelse and len(n.body) == 1
              and isinstance(n.body[0], ast.Return) and not _special_case(n, parameters)]
    if not guards:
        return False  # the common case, checked for every candidate: no dump of the whole function
    target = ast.dump(after)
    return any(ast.dump(_GuardDeleted(guard, how).visit(copy.deepcopy(before))) == target
               for guard in guards for how in ("emptied", "removed", "passed"))


class _GuardDeleted(ast.NodeTransformer):
    """A tree with one guard (found by its position) emptied, removed or replaced by `pass`."""

    def __init__(self, guard: ast.If, how: str) -> None:
        self.at, self.how = (guard.lineno, guard.col_offset), how

    def visit_If(self, node: ast.If) -> ast.AST | None:
        self.generic_visit(node)
        if (node.lineno, node.col_offset) != self.at:
            return node
        if self.how == "emptied":
            node.body = [ast.Pass()]
            return node
        return None if self.how == "removed" else ast.Pass()


def _chains(tree: ast.AST) -> list[list[ast.expr]]:
    """The tests of each `if`/`elif` chain with an `elif`, first to last."""
    inner = {id(n.orelse[0]) for n in ast.walk(tree)
             if isinstance(n, ast.If) and len(n.orelse) == 1 and isinstance(n.orelse[0], ast.If)}
    chains = []
    for node in (n for n in ast.walk(tree) if isinstance(n, ast.If) and id(n) not in inner):
        tests = [node.test]
        while len(node.orelse) == 1 and isinstance(node.orelse[0], ast.If):
            node = node.orelse[0]
            tests.append(node.test)
        if len(tests) > 1:
            chains.append(tests)
    return chains


def _taken(test: ast.expr) -> tuple[str, list[object]] | None:
    """`name == literal`, `name in (literals)` or `name in 'chars'`: the name and the values that take the branch."""
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.left, ast.Name)):
        return None
    op, right = test.ops[0], test.comparators[0]
    if isinstance(op, ast.Eq) and isinstance(right, ast.Constant):
        return test.left.id, [right.value]
    if isinstance(op, ast.In) and isinstance(right, (ast.Tuple, ast.List, ast.Set)) and right.elts \
            and all(isinstance(e, ast.Constant) for e in right.elts):
        return test.left.id, [e.value for e in right.elts if isinstance(e, ast.Constant)]
    if isinstance(op, ast.In) and isinstance(right, ast.Constant) and isinstance(right.value, str) and right.value:
        return test.left.id, list(right.value)
    return None


_PURE = (ast.Compare, ast.BoolOp, ast.UnaryOp, ast.Name, ast.Constant, ast.Tuple, ast.List, ast.Set, ast.cmpop,
         ast.boolop, ast.unaryop, ast.expr_context)


def _holds(test: ast.expr, name: str, value: object) -> bool | None:
    """`test` with `name` bound to `value`; None when it reads anything else (a call, another name) or raises."""
    if any(not isinstance(n, _PURE) or isinstance(n, ast.Name) and n.id != name for n in ast.walk(test)):
        return None
    try:
        code = compile(ast.fix_missing_locations(ast.Expression(copy.deepcopy(test))), "<test>", "eval")
        return bool(eval(code, {"__builtins__": {}}, {name: value}))  # literals and one name: nothing to run
    except Exception:  # noqa: BLE001 (`'a' < 1`: the comparison says nothing about the branch)
        return None


def _shadows(before: ast.AST, after: ast.AST) -> bool:
    """A chain's one changed test now takes every value of a later branch that it did not take before. Chains are
    paired by their order in the function, only where the change kept their number and lengths."""
    olds, news = _chains(before), _chains(after)
    if len(olds) != len(news):
        return False
    for old, new in zip(olds, news):
        changed = [i for i, (a, b) in enumerate(zip(old, new)) if ast.dump(a) != ast.dump(b)]
        if len(old) != len(new) or len(changed) != 1:
            continue
        at = changed[0]
        for taken in filter(None, map(_taken, new[at + 1:])):
            name, values = taken
            if all(_holds(new[at], name, v) is True for v in values) and \
                    any(_holds(old[at], name, v) is False for v in values):
                return True
    return False


def anti_patterns(before: str, after: str, tests: str = "") -> tuple[str, ...]:
    """The rules (RULES) the change from `before` to `after` breaks; `tests`: the failing tests' source."""
    old, new = _parse(before), _parse(after)
    if old is None or new is None:
        return ()
    old_f, new_f = _function(old), _function(new)
    found = []
    if _swallows(old, new):
        found.append("swallows-exception")
    if old_f is not None and new_f is not None and _early_exit(old_f, new_f):
        found.append("early-exit")
    if tests and _special_cases(old, new, tests):
        found.append("special-cases-test")
    if _deletes_check(old, new):
        found.append("deletes-check")
    if _loop_updates(old) - _loop_updates(new):
        found.append("deletes-loop-update")
    if _deletes_guard(old, new):
        found.append("deletes-guard")
    if _shadows(old, new):
        found.append("shadows-branch")
    return tuple(found)


def refusal(rules: Iterable[str]) -> str:
    """Why a candidate breaking `rules` is not tested, as the model reads it."""
    return ("That change was refused, not tested: " + "; ".join(WHY[r] for r in rules)
            + ". Find the line that computes the wrong value and fix it there.")
