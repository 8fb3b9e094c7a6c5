"""Patches that make a failing test pass without fixing the code (bot/agent/antipatterns.py): one rule each."""
from __future__ import annotations

import pytest

from bot.agent.antipatterns import anti_patterns

VISIT = '''def reach(graph, node, seen):
    for nxt in graph[node]:
        if nxt not in seen:
            reach(graph, nxt, seen)
    return seen
'''
TESTS = "def test_reach():\n    assert reach({'a': ['b'], 'b': ['a']}, 'a', set()) == {'a', 'b'}\n"


@pytest.mark.parametrize("after, rule", [
    (VISIT.replace("            reach(graph, nxt, seen)\n",
                   "            try:\n                reach(graph, nxt, seen)\n            except RecursionError:\n"
                   "                pass\n"), "swallows-exception"),
    (VISIT.replace("    for nxt in", "    return {'a', 'b'}\n    for nxt in"), "early-exit"),
    (VISIT.replace("    for nxt in", "    if node == 'a':\n        return {'a', 'b'}\n    for nxt in"),
     "special-cases-test"),
])
def test_each_wrong_fix_of_the_graph_search_is_named(after, rule):
    assert rule in anti_patterns(VISIT, after, TESTS)


def test_the_right_fix_breaks_no_rule():
    fixed = VISIT.replace("    for nxt in", "    seen.add(node)\n    for nxt in")
    assert anti_patterns(VISIT, fixed, TESTS) == ()


def test_a_deleted_raise_or_loop_update_is_named_and_a_changed_one_is_not():
    check = "def f(x):\n    if x < 0:\n        raise ValueError(x)\n    return x\n"
    assert anti_patterns(check, "def f(x):\n    return x\n") == ("deletes-check",)
    assert anti_patterns(check, check.replace("x < 0", "x <= 0")) == ()
    loop = "def f(n):\n    i = 0\n    while i < n:\n        i += 1\n    return i\n"
    assert anti_patterns(loop, loop.replace("        i += 1\n", "        pass\n")) == ("deletes-loop-update",)
    assert anti_patterns(loop, loop.replace("i += 1", "i += 2")) == ()
    stub = 'def shorten(text, width):\n    """To be written."""\n    raise NotImplementedError("shorten")\n'
    written = "def shorten(text, width):\n    return text if len(text) <= width else text[:width - 1] + '.'\n"
    assert anti_patterns(stub, written) == ()  # a stub's body replaced: an implementation, not a deleted check
    assert anti_patterns(stub.replace('("shorten")', ""), written) == ()


def test_a_deleted_guard_is_named_and_a_changed_or_merged_one_is_not():
    guard = ("def join(base, path):\n    if not base.startswith('http'):\n        return None\n"
             "    return base + path\n")
    assert anti_patterns(guard, guard.replace("return None", "pass")) == ("deletes-guard",)
    assert anti_patterns(guard, "def join(base, path):\n    return base + path\n") == ("deletes-guard",)
    assert anti_patterns(guard, guard.replace("'http'", "('http', 'rtmp')")) == ()  # the guard fixed
    skip = ("def total(xs):\n    t = 0\n    for x in xs:\n        if x is None:\n            continue\n"
            "        t += x\n    return t\n")
    assert anti_patterns(skip, skip.replace("            continue\n", "            pass\n")) == ()  # a filter
    two = ("def f(a, b):\n    if a is None:\n        return 0\n    if b is None:\n        return 0\n"
           "    return a + b\n")
    merged = "def f(a, b):\n    if a is None or b is None:\n        return 0\n    return a + b\n"
    assert anti_patterns(two, merged) == ()  # both conditions still guard
    assert anti_patterns(two, "def f(a, b):\n    return 0 if a is None or b is None else a + b\n") == ()
    close = ("def close(xs, t):\n    for a in xs:\n        for b in xs:\n"
             "            if a is not b and abs(a - b) < t:\n                return True\n    return False\n")
    folded = "def close(xs, t):\n    return any(abs(a - b) < t for a in xs for b in xs if a is not b)\n"
    assert anti_patterns(close, folded) == ()  # a rewrite that folds the guard into an expression
    assert anti_patterns(close, "def close(xs, t):\n    return t == 0.3\n") == ()  # a rewrite: not this rule's
    fib = ("def fib(n):\n    if n < 2:\n        return n\n    if n == 2:\n        return 2\n"
           "    return fib(n - 1) + fib(n - 2)\n")
    assert anti_patterns(fib, fib.replace("    if n == 2:\n        return 2\n", "")) == ()  # a wrong special case
    assert anti_patterns(fib, fib.replace("    if n < 2:\n        return n\n", "")) == ("deletes-guard",)


def test_what_the_function_already_had_is_never_held_against_the_change():
    guarded = "def f(x):\n    try:\n        return int(x)\n    except ValueError:\n        return 0\n"
    assert anti_patterns(guarded, guarded.replace("int(x)", "int(x.strip())")) == ()
    empty_guard = "def mean(xs):\n    return sum(xs) / len(xs)\n"
    assert anti_patterns(empty_guard, "def mean(xs):\n    if not xs:\n        return 0.0\n"
                                      "    return sum(xs) / len(xs)\n", "assert mean([]) == 0.0\n") == ()
    assert anti_patterns("def f(:", "def f(): pass") == ()  # a function that does not parse: nothing to say
    # a new branch for the test's case that computes its answer is how many real bugs are fixed
    ext = "def ext(name):\n    return name.rsplit('.', 1)[-1]\n"
    branch = ext.replace("    return", "    if name.endswith('.tar.gz'):\n        return name[-6:]\n    return")
    assert anti_patterns(ext, branch, "assert ext('a.tar.gz') == 'tar.gz'\n") == ()
    count = "def unique(xs):\n    return len(set(xs)) == len(xs)\n"
    limit = count.replace("    return", "    if xs.count(xs[0]) > 2:\n        return False\n    return")
    assert anti_patterns(count, limit, "assert unique([2, 2, 2]) == False\n") == ()  # a threshold, not an input



# a form feed should count one column; `char <= ' '` passes the tests and sends every newline past its own branch
WIDTH = '''def width(line):
    """The column where the line's text starts."""
    col = 0
    for char in line:
        if char == '\\t':
            col += 4
        elif char == ' ':
            col += 1
        elif char == '\\n':
            col = 0
        else:
            break
    return col
'''
CLEAN_WIDTH = WIDTH.replace("char == ' '", "char in ' \\x0c'")


def test_a_condition_widened_over_a_later_branch_is_named_and_one_that_leaves_every_branch_reachable_is_not():
    assert anti_patterns(WIDTH, WIDTH.replace("char == ' '", "char <= ' '")) == ("shadows-branch",)
    assert anti_patterns(WIDTH, WIDTH.replace("char == ' '", "char in ' \\n'")) == ("shadows-branch",)
    assert anti_patterns(WIDTH, WIDTH.replace("col += 4", "col += 1")) == ()  # a body's change
    assert anti_patterns(WIDTH, CLEAN_WIDTH) == ()  # widened, every branch still reachable
    deleted = WIDTH.replace("char == ' '", "char in ' \\n'").replace("        elif char == '\\n':\n"
                                                                     "            col = 0\n", "")
    assert anti_patterns(WIDTH, deleted) == ()  # the branch deleted along with the widening: a rewrite to read
    # a test that reads anything but the one name cannot be evaluated, and says nothing
    assert anti_patterns(WIDTH, WIDTH.replace("char == ' '", "char.isspace()")) == ()
    # a chain that already took a later branch's values is what the function had: never held against a change
    loop = WIDTH[WIDTH.index("    for char"):WIDTH.index("    return col")]
    two = WIDTH.replace("    return col\n", loop.replace("char == ' '", "char <= ' '") + "    return col\n")
    assert anti_patterns(two, two) == () and anti_patterns(two, two.replace("col += 4", "col += 2", 1)) == ()
    assert anti_patterns(two, two.replace("char == ' '", "char <= ' '")) == ("shadows-branch",)
