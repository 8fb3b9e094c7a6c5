"""Model text -> a faithful function: extraction, signature, AST hash, minimal merge, splice."""
from __future__ import annotations

import textwrap

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.agent.code import (changed_lines, code_hash, extract_function, faithful, function_source,
                            signature_problem, splice)

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
    "Sure! The fix:\n```py\ndef mean(xs, start=0):\n    total = sum(xs) + start\n    return total / len(xs)\n```\nThis works.",
    "def mean(xs, start=0):\n    total = sum(xs) + start\n    return total / len(xs)\n",
    "```\n    def mean(xs, start=0):\n        total = sum(xs) + start\n        return total / len(xs)\n```",
    "```python\nimport math\n\ndef helper():\n    pass\n\ndef mean(xs, start=0):\n    total = sum(xs) + start\n    return total / len(xs)\n\nprint(mean([1]))\n```",
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
    candidate = f"def mean(xs, start=0):\n{indent}total = sum(xs) {op} start\n{indent}return total / (len(xs) + {const})\n"
    merged = faithful(candidate, ORIGINAL)
    assert code_hash(merged) == code_hash(candidate)


def test_changed_lines_counts_regions():
    assert changed_lines("a\nb\nc\n", "a\nB\nc\n") == 1
    assert changed_lines("a\nb\nc\n", "a\nB\nC\nD\n") == 3


def test_splice_keeps_every_other_byte():
    module = "import os\n\n\nclass K:\n    def mean(self, xs):\n        return 0\n\n    def other(self):\n        return 1\n# end\n"
    new = splice(module, "mean", "def mean(self, xs):\n    return sum(xs)\n")
    assert new == module.replace("        return 0\n", "        return sum(xs)\n")
    assert function_source(new, "mean") == "def mean(self, xs):\n    return sum(xs)\n"
    with pytest.raises(ValueError):
        splice(module, "nope", "def nope():\n    pass\n")


def test_decorators_are_part_of_the_function():
    module = textwrap.dedent("""
        import functools

        @functools.cache
        def f(x):
            return x
    """)
    assert function_source(module, "f").startswith("@functools.cache\ndef f(x):")
