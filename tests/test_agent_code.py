"""Model text -> a faithful function: extraction, signature, AST hash, minimal merge."""
from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.agent.source.code import (
    changed_lines,
    code_hash,
    extract_function,
    signature_problem,
    split_docstring,
    target_kind,
)
from bot.agent.source.faithful import faithful

ORIGINAL = '''def mean(xs, start=0):
    """Mean of xs.

    >>> mean([1, 2])
    1.5
    """
    # sum first
    total = sum(xs) + start

    return total / (len(xs) + 1)
'''


@pytest.mark.parametrize("answer", [
    "```python\ndef mean(xs, start=0):\n    total = sum(xs) + start\n    return total / len(xs)\n```",
    "Sure! The fix:\n```py\ndef mean(xs, start=0):\n    total = sum(xs) + start\n    return total / len(xs)\n"
    "```\nThis works.",
    "def mean(xs, start=0):\n    total = sum(xs) + start\n    return total / len(xs)\n",
    "```\n    def mean(xs, start=0):\n        total = sum(xs) + start\n        return total / len(xs)\n```",
    "```python\nimport math\n\ndef helper():\n    pass\n\n"
    "def mean(xs, start=0):\n    total = sum(xs) + start\n    return total / len(xs)\n\nprint(mean([1]))\n```",
])
def test_extraction_forms(answer):
    got = extract_function(answer, "mean", ORIGINAL)
    assert got.problem is None and got.code is not None
    assert "return total / len(xs)" in got.code and "print" not in got.code and "helper" not in got.code


def test_body_only_answer_gets_the_original_header():
    got = extract_function("```python\ntotal = sum(xs) + start\nreturn total / len(xs)\n```", "mean", ORIGINAL)
    assert got.code is not None and got.code.startswith("def mean(xs, start=0):")


def test_unterminated_fence_still_parses():
    got = extract_function("```python\ndef mean(xs, start=0):\n    return sum(xs) / len(xs)\n", "mean", ORIGINAL)
    assert got.problem is None


def test_syntax_error_detail_names_the_line():
    got = extract_function("```python\ndef mean(xs, start=0)\n    return 1\n```", "mean", ORIGINAL)
    assert got.problem == "syntax" and got.detail.startswith("line 1:")


def test_missing_function():
    got = extract_function("```python\ndef average(xs):\n    return 1\n```", "mean", ORIGINAL)
    assert got.problem == "missing" and "`mean`" in got.detail


@pytest.mark.parametrize("header,ok", [("def mean(xs, start=0):", True), ("def mean(xs, start=1):", True),
                                       ("def mean(xs):", False), ("def mean(ys, start=0):", False),
                                       ("def mean(xs, start=0, *rest):", False)])
def test_signature_rules(header, ok):
    problem = signature_problem(f"{header}\n    return 1\n", ORIGINAL, "mean")
    assert (problem is None) == ok


def test_hash_ignores_formatting_comments_and_docstrings():
    a = "def f(x):\n    '''Doc.'''\n    return x+1  # one\n"
    b = 'def f(x):\n    return (x + 1)\n'
    assert code_hash(a) == code_hash(b) and code_hash(a) != code_hash("def f(x):\n    return x - 1\n")


def test_faithful_restores_docstring_comments_blank_lines_and_quotes():
    answer = "def mean(xs,start = 0):\n  total = sum(xs)+start  # the sum\n  return total / len(xs)\n"
    merged = faithful(answer, ORIGINAL)
    assert merged == ORIGINAL.replace("(len(xs) + 1)", "len(xs)")
    assert changed_lines(ORIGINAL, merged) == 1


def test_faithful_falls_back_when_merging_would_change_the_program():
    tricky = 'def mean(xs, start=0):\n    total = """\n    # not a comment\n    """\n    return total\n'
    assert code_hash(faithful(tricky, ORIGINAL)) == code_hash(tricky)


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(["+", "-", "*", "//"]), st.integers(0, 5), st.sampled_from(["    ", "  ", "\t"]))
def test_faithful_never_changes_behaviour(op, const, indent):
    candidate = (f"def mean(xs, start=0):\n{indent}total = sum(xs) {op} start\n"
                 f"{indent}return total / (len(xs) + {const})\n")
    merged = faithful(candidate, ORIGINAL)
    assert code_hash(merged) == code_hash(candidate)


def test_changed_lines_counts_regions():
    assert changed_lines("a\nb\nc\n", "a\nB\nc\n") == 1
    assert changed_lines("a\nb\nc\n", "a\nB\nC\nD\n") == 3


TABLE = '''_CONVERT = {
    # base 10 and 16
    'int': lambda s: int(s),
    'hex': lambda s: int(s, 10),
}
'''


@pytest.mark.parametrize("answer", [
    "```python\n_CONVERT = {\n    'int': lambda s: int(s),\n    'hex': lambda s: int(s, 16),\n}\n```",
    "The fix:\n```py\nimport re\n\n_CONVERT = {'int': lambda s: int(s), 'hex': lambda s: int(s, 0)}\n\n"
    "def convert(kind, s):\n    return _CONVERT[kind](s)\n\nprint(convert('hex', 'ff'))\n```",
    "_CONVERT = {\n    'int': lambda s: int(s),\n    'hex': lambda s: int(s, 16),\n}\n",
    "```python\n_CONVERT = {}\n_CONVERT = {\n    'int': lambda s: int(s),\n    'hex': lambda s: int(s, 16),\n}\n```",
])
def test_an_assignment_target_is_extracted_from_the_answer(answer):
    assert target_kind(TABLE) == "assignment" and target_kind(ORIGINAL) == "function"
    got = extract_function(answer, "_CONVERT", TABLE)
    assert got.problem is None and got.code is not None and got.code.startswith("_CONVERT = {")
    assert "int(s, 10)" not in got.code and "print" not in got.code and "def " not in got.code
    assert signature_problem(got.code, TABLE, "_CONVERT") is None


def test_a_class_attribute_may_come_back_inside_its_class():
    got = extract_function("```python\nclass Length:\n    rate = 0.25\n\n    def m(self):\n        pass\n```",
                           "rate", "rate = 0.5\n")
    assert got.code == "rate = 0.25\n"


@pytest.mark.parametrize(("answer", "problem"), [
    ("```python\ndef _convert(kind, s):\n    return int(s, 16)\n```", "missing"),
    ("```python\nCONVERT = {}\n```", "missing"),
    ("```python\n_CONVERT = {'int': lambda s: int(s)\n```", "syntax"),
])
def test_an_answer_without_the_assignment(answer, problem):
    got = extract_function(answer, "_CONVERT", TABLE)
    assert got.code is None and got.problem == problem
    assert problem == "syntax" or "`_CONVERT`" in got.detail


@pytest.mark.parametrize(("candidate", "ok"), [
    ("_CONVERT = {}\n", True), ("_CONVERT: dict = {}\n", True), ("CONVERT = {}\n", False),
    ("_CONVERT = OTHER = {}\n", False), ("_CONVERT = {}\nX = 1\n", False), ("def _CONVERT():\n    pass\n", False),
])
def test_the_signature_of_an_assignment_is_the_names_it_assigns(candidate, ok):
    problem = signature_problem(candidate, TABLE, "_CONVERT")
    assert (problem is None) == ok
    assert ok or "_CONVERT" in problem


def test_faithful_keeps_an_assignments_comments_and_quotes():
    answer = '_CONVERT = {\n  "int": lambda s: int(s),\n  "hex": lambda s: int(s, 16),\n}\n'
    merged = faithful(answer, TABLE)
    # the comment and the untouched entry as they were; the changed entry as the model wrote it, re-indented
    assert merged == TABLE.replace("'hex': lambda s: int(s, 10)", '"hex": lambda s: int(s, 16)')
    assert changed_lines(TABLE, merged) == 1 and code_hash(merged) == code_hash(answer)
    assert split_docstring(TABLE) == (TABLE, "")
