"""Locals a function assigns and never reads (bot/agent/steps/unused.py), and the linter's note in the prompt."""
from __future__ import annotations

from bot.agent import Briefing, Target
from bot.agent.steps import prompts
from bot.agent.steps.unused import unused, unused_note

SORT = '''def sort_numbers(numbers: str) -> str:
    """Sort the number words from 'zero' to 'nine'."""
    value_map = {'zero': 0, 'one': 1, 'two': 2}
    return ' '.join([x for x in numbers.split(' ') if x])
'''


def test_a_table_built_and_never_used_is_named():
    assert unused(SORT) == {"sort_numbers": ("value_map",)}
    assert unused_note(SORT) == "A linter notes: in `sort_numbers`, `value_map` is assigned but never used."


def test_names_read_anywhere_declared_global_private_looped_unpacked_or_parameters_are_not_named():
    source = '''def f(xs, k, _unused):
    total = 0
    seen = set()
    global COUNT
    COUNT = 1
    _scratch = 2
    key, value = 1, 2
    for i in range(3):
        pass
    with open(xs) as fh:
        pass
    def g():
        return seen
    del_me = 4
    del del_me
    total += len(xs)
    return g, total, value
'''
    assert unused(source) == {}
    assert unused_note(source) == ""


def test_a_function_that_reads_its_locals_through_locals_names_none():
    source = "def f(n):\n    indent = ' ' * n\n    return '{indent}x'.format(**locals())\n"
    assert unused(source) == {}
    assert unused(source.replace("**locals()", "indent=''")) == {"f": ("indent",)}


def test_each_of_a_caller_and_its_helper_is_checked_and_bad_code_names_nothing():
    source = "def helper(a):\n    b: int = a\n    return a\n\n\ndef caller(x):\n    y = helper(x)\n    return x\n"
    assert unused(source) == {"helper": ("b",), "caller": ("y",)}
    assert unused_note(source) == ("A linter notes: in `helper`, `b` is assigned but never used; in `caller`, `y` is "
                                   "assigned but never used.")
    assert unused("def f(:\n") == {}


def test_the_prompt_names_the_unused_table_and_not_for_a_function_whose_locals_are_all_read():
    _, user = prompts.draft(Target("sort_numbers", SORT), Briefing("E   assert 'three one' == 'one three'"))
    assert "`value_map` is assigned but never used" in user.content
    plain = SORT.replace("    value_map", "    # value_map")
    _, user = prompts.draft(Target("sort_numbers", plain), Briefing("E   assert 'three one' == 'one three'"))
    assert "linter" not in user.content
