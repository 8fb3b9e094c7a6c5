"""The thought-patch agent's line edits: parsed from model text, validated, applied by line number."""
from __future__ import annotations

import pytest

from bot.agent.edits import EditError, apply_edits, numbered, parse_edits

SOURCE = '''def total(xs):
    """Sum the positive numbers.

    >>> total([1, -2, 3])
    4
    """
    out = 0
    for x in xs:
        if x < 0:
            out += x
    return out
'''
DOC = range(2, 7)


def edit(text: str) -> str:
    return apply_edits(SOURCE, parse_edits(text), DOC)


def test_numbered_hides_the_docstring_but_keeps_the_numbers():
    view = numbered(SOURCE, DOC)
    assert view.text.splitlines()[:3] == [" 1 | def total(xs):", "   | (docstring: lines 2-6, not shown)",
                                          " 7 |     out = 0"]
    assert "11 |     return out" in view.text and view.protected == DOC


def test_replace_keeps_every_other_line_and_fixes_a_flush_left_answer():
    fixed = edit('{"edits": [{"op": "replace", "start": 9, "end": 9, "code": "if x > 0:"}]}')
    assert fixed == SOURCE.replace("if x < 0:", "if x > 0:")


def test_fenced_bare_list_and_several_edits_apply_bottom_up():
    text = 'Here you go:\n```json\n[{"op": "delete", "start": 11, "end": 11},\n' \
           ' {"op": "insert", "after": 10, "code": "    return max(out, 0)"},\n' \
           ' {"op": "replace", "start": 7, "end": 7, "code": "    out = 0  # start"}]\n```'
    lines = edit(text).splitlines()
    assert lines[6] == "    out = 0  # start" and lines[-1] == "    return max(out, 0)" and len(lines) == 11


def test_insert_after_a_block_opener_is_indented_into_the_block():
    fixed = edit('{"edits": [{"op": "insert", "after": 8, "code": "if x is None:\\n    continue"}]}')
    assert "    for x in xs:\n        if x is None:\n            continue\n        if x < 0:" in fixed


def test_an_insert_before_a_replace_of_the_next_line_is_not_an_overlap():
    fixed = edit('{"edits": [{"op": "replace", "start": 11, "end": 11, "code": "    return out"},'
                 ' {"op": "insert", "after": 10, "code": "    out = abs(out)"}]}')
    assert fixed.endswith("            out += x\n    out = abs(out)\n    return out\n")


@pytest.mark.parametrize("text, reason", [
    ("the bug is on line 9", "no JSON"),
    ('{"edits": [{"op": "replace", "start": 9, "end": 9, "code": "x"', "not JSON"),
    ('{"edits": []}', "at least one edit"),
    ('{"edits": [{"op": "swap", "start": 9, "end": 9}]}', "edit 1: Input tag 'swap'"),
    ('{"edits": [{"op": "replace", "start": "nine", "end": 9, "code": "x"}]}', "start"),
    ('{"edits": [{"op": "replace", "start": 12, "end": 12, "code": "x"}]}', "lines 1-11"),
    ('{"edits": [{"op": "replace", "start": 9, "end": 8, "code": "x"}]}', "not a range"),
    ('{"edits": [{"op": "replace", "start": 1, "end": 1, "code": "def total(ys):"}]}', "def` line"),
    ('{"edits": [{"op": "delete", "start": 3, "end": 3}]}', "docstring"),
    ('{"edits": [{"op": "insert", "after": 3, "code": "x = 1"}]}', "insert after a code line"),
    ('{"edits": [{"op": "delete", "start": 8, "end": 10}, {"op": "replace", "start": 9, "end": 9, "code": "x"}]}',
     "overlap"),
])
def test_a_bad_edit_says_why_in_words_for_the_model(text, reason):
    with pytest.raises(EditError, match=reason):
        edit(text)


def test_inserting_right_after_the_docstring_is_allowed():
    fixed = edit('{"edits": [{"op": "insert", "after": 6, "code": "if not xs:\\n    return 0"}]}')
    assert '    """\n    if not xs:\n        return 0\n    out = 0' in fixed


def test_a_replacement_keeps_the_replaced_lines_indentation_and_its_own_relative_one():
    fixed = edit('{"edits": [{"op": "replace", "start": 9, "end": 10, "code": "  if x > 0:\\n      out += x"}]}')
    assert "        if x > 0:\n            out += x\n" in fixed
