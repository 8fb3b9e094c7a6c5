"""One-edit mutants: every operator family, faithful text, ranking, and coverage of HumanEvalFix's bugs."""
from __future__ import annotations

import ast
import json

import pytest

from bot.agent.search.evidence import Evidence
from bot.agent.search.mutate import mutants, rank, ranked_mutants
from bot.agent.source.code import changed_lines, code_hash
from bot.fix.locate.spans import function_source

FUNC = '''def f(xs, n):
    """Docstring: 1 < 2 and x + 1."""
    # a comment, kept
    total = 0
    for i in range(n):
        if xs[i] < 3 and i > 0:
            total += xs[i] * 2
    return max(total, n - 1)
'''


def edits(source: str = FUNC, name: str = "f") -> dict[str, list[str]]:
    by_op: dict[str, list[str]] = {}
    for m in mutants(source, name):
        by_op.setdefault(m.operator, []).append(m.description)
    return by_op


def applied(source: str, old: str, new: str) -> str:
    assert source.count(old) == 1, old
    return source.replace(old, new)


@pytest.mark.parametrize("old,new,operator", [
    ("xs[i] < 3", "xs[i] <= 3", "compare"),
    ("i > 0", "i >= 0", "compare"),
    ("total += xs", "total -= xs", "arithmetic"),
    ("xs[i] * 2", "xs[i] // 2", "arithmetic"),
    ("n - 1)", "n + 1)", "arithmetic"),
    ("< 3 and i", "< 3 or i", "boolean"),
    ("if xs[i] < 3 and i > 0:", "if xs[i] < 3:", "drop-operand"),
    ("xs[i] * 2", "xs[i]", "drop-operand"),
    ("total = 0", "total = 1", "constant"),
    ("< 3 and", "< 4 and", "constant"),
    ("return max(", "return min(", "call"),
    ("range(n)", "range(n + 1)", "bound"),
    ("if xs[i] < 3", "if xs[i - 1] < 3", "bound"),
    ("return max(total, n - 1)", "return abs(max(total, n - 1))", "insert"),
    ("return max(total, n - 1)", "return max(total, abs(n - 1))", "insert"),
    ("range(n)", "range(total)", "variable"),
    ("max(total, n - 1)", "max(n - 1, total)", "swap"),
])
def test_each_family_yields_the_one_edit_and_nothing_else_moves(old, new, operator):
    expected = applied(FUNC, old, new)
    found = {m.source: m for m in mutants(FUNC, "f")}
    assert expected in found, f"{operator}: {old!r} -> {new!r} not among the mutants"
    assert found[expected].operator == operator
    assert changed_lines(FUNC, expected) == 1


@pytest.mark.parametrize("body,identity,instead", [
    ("    return len(xs) + 1\n", "    return len(xs) * 1\n", "    return len(xs)\n"),
    ("    return len(xs) * 1.0\n", "    return len(xs) / 1.0\n", "    return len(xs)\n"),
    ("    n = len(xs)\n    n += 1\n    return n\n", "    n *= 1\n", "    n = len(xs)\n    return n\n"),
])
def test_a_swap_that_leaves_the_other_operand_as_it_was_is_written_as_dropping_it(body, identity, instead):
    """`len(xs) * 1` passes exactly where `len(xs)` does, and reads worse in a fix."""
    sources = [m.source for m in mutants("def f(xs):\n" + body, "f")]
    assert not any(identity in source for source in sources)
    assert "def f(xs):\n" + instead in sources
    assert any("0 - len(xs)" in m.source for m in mutants("def f(xs):\n    return 0 + len(xs)\n", "f"))



def test_a_case_method_becomes_another():
    found = {m.source for m in mutants("def f(s):\n    return s.lower()\n", "f")}
    assert "def f(s):\n    return s.upper()\n" in found


def test_neighbours_in_a_tuple_swap_in_a_target_and_in_values():
    source = "def f(date):\n    day, month, year = date.split('-')\n    return (day,month)\n"
    found = {m.source: m.operator for m in mutants(source, "f")}
    assert found[applied(source, "day, month, year", "month, day, year")] == "swap"
    assert found[applied(source, "day, month, year", "day, year, month")] == "swap"
    assert found[applied(source, "(day,month)", "(month,day)")] == "swap"  # the text between them kept
    assert applied(source, "day, month, year", "year, month, day") not in found  # neighbours only


def test_swapped_call_arguments_keep_the_text_between_them():
    """A fix's diff shows the swap and nothing else: no space added, no line joined."""
    source = "def f(a, b):\n    return pow(a,b) + max(\n        a,\n        b)\n"
    found = {m.source for m in mutants(source, "f") if m.operator == "swap"}
    assert applied(source, "pow(a,b)", "pow(b,a)") in found
    assert applied(source, "        a,\n        b)", "        b,\n        a)") in found


def test_a_deleted_statement_takes_its_line_or_leaves_pass_in_a_lone_block():
    found = {m.source for m in mutants(FUNC, "f")}
    assert applied(FUNC, "    total = 0\n", "") in found
    assert applied(FUNC, "            total += xs[i] * 2", "            pass") in found  # the if's only statement


def test_docstring_comments_and_signature_are_never_mutated():
    for m in mutants(FUNC, "f"):
        assert '"""Docstring: 1 < 2 and x + 1."""' in m.source and "# a comment, kept" in m.source
        assert m.source.startswith("def f(xs, n):\n")
        ast.parse(m.source)


def test_mutants_are_distinct_and_never_the_original():
    found = mutants(FUNC, "f")
    hashes = [code_hash(m.source) for m in found]
    assert len(hashes) == len(set(hashes)) and code_hash(FUNC) not in hashes
    assert 50 < len(found) < 400


def test_operators_in_strings_fstrings_and_unicode_columns_are_left_alone():
    source = 'def g(s):\n    t = "a < b"  # é < ü\n    return f"{s}-{t}" if len("ü" + s) > 1 else s\n'
    for m in mutants(source, "g"):
        if m.operator not in ("delete", "string"):  # string edits change literals, on purpose
            assert '"a < b"' in m.source and "# é < ü" in m.source
    assert applied(source, "> 1", ">= 1") in {m.source for m in mutants(source, "g")}


def test_a_function_that_does_not_parse_has_no_mutants():
    assert mutants("def f(:\n    return 1\n", "f") == []
    assert mutants(FUNC, "missing") == []


def test_rank_puts_the_lines_the_failure_names_first_and_caps():
    found = mutants(FUNC, "f")
    ranked = rank(found, hot_lines={8}, cap=10)
    assert len(ranked) == 10 and all(m.line == 8 for m in ranked)
    assert [m.operator for m in rank(found, cap=3)] == ["compare"] * 3  # operator order without hints


@pytest.fixture(scope="module")
def tasks(shared_data):
    return [json.loads(line) for line in (shared_data / "humanevalpack-python.jsonl").read_text().splitlines()]


def test_humanevalfix_canonical_fixes_among_the_one_edit_mutants(tasks):
    """How many of the 164 bugs one edit can undo (an upper bound for the search without the model)."""
    covered = 0
    for t in tasks:
        buggy = function_source(t["prompt"] + t["buggy_solution"], t["entry_point"])
        canonical = code_hash(function_source(t["prompt"] + t["canonical_solution"], t["entry_point"]))
        covered += canonical in {code_hash(m.source) for m in mutants(buggy, t["entry_point"])}
    assert covered >= 83, covered


TABLE = '''_CONVERT = {
    # base 10 and 16
    "int": lambda s, base=10: int(s, base),
    "hex": lambda s: int(s, 10) + 0,
}
'''


def test_an_assignment_target_is_mutated_in_its_values_and_keeps_its_names():
    found = {m.source: m for m in mutants(TABLE, "_CONVERT")}
    assert applied(TABLE, "int(s, 10) + 0", "int(s, 16) + 0") not in found  # one edit is +-1, 0, 1 on a constant
    assert applied(TABLE, "int(s, 10)", "int(s, 11)") in found
    assert found[applied(TABLE, "int(s, 10) + 0", "int(s, 10) * 0")].operator == "arithmetic"
    assert applied(TABLE, "int(s, base)", "int(base, s)") in found  # swapped arguments
    assert applied(TABLE, "int(s, base)", "int(s, s)") in found  # another variable: the lambdas' parameters
    for m in found.values():
        assert m.operator != "delete" and m.source.startswith("_CONVERT = {\n    # base 10 and 16\n")
        assert [n.id for n in ast.walk(ast.parse(m.source)) if isinstance(n, ast.Name)].count("_CONVERT") == 1
        assert changed_lines(TABLE, m.source) == 1 or m.operator == "string"  # a case edit of every key
    assert [m.source for m in mutants("RATE = 3\n", "RATE")] == ["RATE = 4\n", "RATE = 2\n", "RATE = 0\n",
                                                                  "RATE = 1\n"]
    assert mutants("x.attr = 3\n", "attr") == []  # not a target: it stores into another object


def test_ranked_mutants_are_rank_of_mutants_without_building_the_rest():
    from bot.agent.search.mutate import mutants, rank, ranked_mutants

    body = "".join(f"    x{i} = a + {i} if a > {i} else b - {i}\n" for i in range(12))
    source = f"def long(a, b):\n{body}    return x0 * x11\n"
    for hot in (set(), {6, 7}):
        slow = rank(mutants(source, "long"), hot, 24)
        fast = ranked_mutants(source, "long", frozenset(), 24, Evidence(hot_lines=frozenset(hot)))
        assert [m.source for m in fast] == [m.source for m in slow] and len(fast) == 24


def test_a_function_that_ends_in_an_assignment_is_ranked_too():
    """An excerpt of a long function (bot/fix/locate/excerpt.py) may end in an assignment: the None check inserted after
    it starts at the text's very end, which ranking must place on the last line."""
    found = ranked_mutants("def f(x):\n    y = g(x)\n", "f", evidence=Evidence(hot_lines=frozenset({2})))
    assert any(m.source.endswith("if y is None:\n        return None\n") for m in found)
    # no final newline: no crash either
    assert ranked_mutants("def f(x):\n    y = g(x)", "f", evidence=Evidence(hot_lines=frozenset({2})))


@pytest.mark.parametrize("body,dropped,not_written", [
    ("    return sum(xs) / (len(xs) + 1)\n", "    return sum(xs) / len(xs)\n", "/ (len(xs))"),  # its own go too
    ("    return xs[(n + 1)]\n", "    return xs[n]\n", "[(n)]"),
    ("    return g(len(xs) + 1)\n", "    return g(len(xs))\n", "g len(xs)"),  # a call's stay
    ("    return g(2,len(xs)+1)\n", "    return g(2,len(xs))\n", "2len"),  # and the last argument's
])
def test_a_dropped_operand_takes_its_parentheses_when_the_kept_one_needs_none(body, dropped, not_written):
    sources = [m.source for m in mutants("def f(xs, n, g):\n" + body, "f") if m.operator == "drop-operand"]
    assert "def f(xs, n, g):\n" + dropped in sources, sources
    assert not any(not_written in source for source in sources), sources


@pytest.mark.parametrize("call,reversed_", [
    ("sorted(xs)", "sorted(xs, reverse=True)"),
    ("sorted(xs, key=len)", "sorted(xs, key=len, reverse=True)"),
    ("xs.sort()", "xs.sort(reverse=True)"),
])
def test_a_sort_is_reversed(call, reversed_):
    found = {m.source: m.operator for m in mutants(f"def f(xs):\n    return {call}\n", "f")}
    assert found[f"def f(xs):\n    return {reversed_}\n"] == "call"


def test_a_sort_already_reversed_gets_no_second_reverse():
    assert not any(m.source.count("reverse=") > 1
                   for m in mutants("def f(xs):\n    return sorted(xs, reverse=True)\n", "f"))


def test_a_predicate_answering_the_wrong_way_round_has_every_bool_negated_at_once():
    body = "def f(xs, t):\n    for x in xs:\n        if x >= t:\n            return True\n    return False\n"
    found = {m.source: m for m in mutants(body, "f")}
    both = body.replace("True", "@").replace("False", "True").replace("@", "False")
    assert found[both].operator == "negate-all"
    assert changed_lines(body, both) == 2
    alike = "def f(a, b):\n    if a:\n        return True\n    return b or True\n"  # nothing the wrong way round
    assert not any(m.source.count("False") == 2 for m in mutants(alike, "f"))


def test_a_one_argument_call_takes_the_argument_of_another_call_to_the_same_function():
    body = 'def f(ch):\n    return chr((ord(ch) - ord("a") + 5) % 26 + ord(ch))\n'
    found = {m.source: m.operator for m in mutants(body, "f")}
    assert found['def f(ch):\n    return chr((ord(ch) - ord("a") + 5) % 26 + ord("a"))\n'] == "variable"
    assert found['def f(ch):\n    return chr((ord(ch) - ord(ch) + 5) % 26 + ord(ch))\n'] == "variable"


def test_a_missing_return_is_one_edit_of_the_block_that_falls_off_the_end():
    computes = "def total(xs):\n    result = 0\n    for x in xs:\n        result += x\n    result = round(result, 2)\n"
    returned = [m for m in mutants(computes, "total") if m.operator == "return"]
    assert [m.source for m in returned] == [computes + "    return result\n"]
    branch = ("def pick(d, k):\n    if k in d:\n        value = d[k]\n    else:\n        return None\n"
              "    return 0\n")
    fixed = branch.replace("        value = d[k]\n", "        value = d[k]\n        return value\n")
    assert fixed in [m.source for m in mutants(branch, "pick") if m.operator == "return"]
    call = "def name(user):\n    user.strip().title()\n"
    assert [m.source for m in mutants(call, "name") if m.operator == "return"] == [
        "def name(user):\n    return user.strip().title()\n"]
    generator = "def gen(xs):\n    for x in xs:\n        yield x\n    done = True\n"
    assert not [m for m in mutants(generator, "gen") if m.operator == "return"]


def test_a_call_that_leaves_out_a_flag_its_callee_offers_gets_it_set_against_its_default():
    from bot.agent.search.keywords import callee_flags
    context = ("import json\n# the project functions it calls:\n"
               "def load(path, strict=False, *, cache=True, mode='r'): ...  # Read a file.\n"
               "def save(data, **options): ...")
    assert callee_flags(context) == (("load", "strict", False), ("load", "cache", True))
    func = "def read(p):\n    return load(p, cache=True)\n"
    found = [m.source for m in ranked_mutants(func, "read", evidence=Evidence(flags=callee_flags(context)))
             if m.operator == "keyword"]
    assert found == ["def read(p):\n    return load(p, cache=True, strict=True)\n"]  # cache is passed already
    multi = "def read(p):\n    return load(\n        p,\n    )\n"
    assert [m.source for m in ranked_mutants(multi, "read", evidence=Evidence(flags=callee_flags(context)))
            if m.operator == "keyword"] == ["def read(p):\n    return load(\n        p,\n    strict=True)\n",
                                            "def read(p):\n    return load(\n        p,\n    cache=False)\n"]
    assert not [m for m in mutants(func, "read") if m.operator == "keyword"]  # no context: no flags
