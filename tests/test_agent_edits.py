"""The thought-patch agent's line edits: parsed from model text, validated, applied by line number."""
from __future__ import annotations

import json

import pytest

from bot.agent.designs.edit_layout import apply_edits
from bot.agent.designs.edits import EditError, anchors, edit_schema, numbered, parse_edits, quoted

# The function as the thought-patch agent shows it: without its docstring, numbered 1..n.
SOURCE = '''def total(xs):
    out = 0
    for x in xs:
        if x < 0:
            out += x

    return out
'''


def edit(text: str) -> str:
    return apply_edits(SOURCE, parse_edits(text))


def test_numbered_numbers_every_line():
    assert numbered(SOURCE).splitlines() == ["1 | def total(xs):", "2 |     out = 0", "3 |     for x in xs:",
                                             "4 |         if x < 0:", "5 |             out += x", "6 | ",
                                             "7 |     return out"]


TWICE = "def f(x):\n    if x:\n        return 1\n    if not x:\n        return 1\n"


def test_lines_are_named_by_their_text_and_by_their_number_where_two_read_the_same():
    assert anchors(SOURCE) == {"def total(xs):": 1, "out = 0": 2, "for x in xs:": 3, "if x < 0:": 4, "out += x": 5,
                               "return out": 7}
    assert anchors(TWICE) == {"def f(x):": 1, "if x:": 2, "return 1  # line 3": 3, "if not x:": 4,
                              "return 1  # line 5": 5}
    replace = edit_schema(TWICE)["properties"]["edits"]["items"]["anyOf"][0]
    assert "def f(x):" not in replace["properties"]["line"]["enum"], "the def line is never replaced"


def test_a_plan_names_lines_by_text_or_a_quoted_part_spaces_aside_else_by_number():
    assert quoted(SOURCE, "The loop `for x in  xs:` is fine; `x<0` should be `x > 0`.") == ["for x in xs:",
                                                                                            "if x < 0:"]
    assert quoted(SOURCE, "It should return\n   out\nat the end.") == ["return out"], "line breaks are spaces"
    assert quoted(SOURCE, "Line 4 tests the wrong sign.") == ["if x < 0:"]
    assert quoted(SOURCE, "Line 5 is wrong: `if x < 0:` should test `x > 0`.") == ["if x < 0:"], \
        "a number counts only when no line is named by its text: small models miscount (Python/142)"
    assert quoted(SOURCE, "The sum starts wrong; `x` is each item.") == [], "a part shorter than 3 names nothing"


def test_a_plan_s_lines_are_the_only_ones_its_edit_may_replace_or_delete():
    def enums(lines: list[str]) -> list[list[str]]:
        items = edit_schema(SOURCE, lines)["properties"]["edits"]["items"]["anyOf"]
        return [item["properties"].get("line", item["properties"].get("after"))["enum"] for item in items]
    replace, insert, delete = enums(["if x < 0:"])
    assert replace == delete == ["if x < 0:"] and insert == list(anchors(SOURCE)), "inserting stays free"
    assert enums([])[0] == enums(["def total(xs):"])[0] == ["out = 0", "for x in xs:", "if x < 0:", "out += x",
                                                            "return out"], "no body line named: all of them"


def test_line_names_hold_only_what_llama_cpp_s_grammar_converter_escapes_correctly():
    """A backslash in an enum value's JSON (a quote, a backslash, a tab, non-ASCII) made a grammar llama.cpp could
    not parse, and the model process crashed (exit -11) on `ret = ""`."""
    source = 'def f(x):\n    ret = ""\n    pat = r"\\d+\tcaf\u00e9"\n    return ret\n'
    names = anchors(source)
    assert list(names) == ["def f(x):", "ret = ''", "pat = r'/d+ caf?'", "return ret"]
    assert not any("\\" in json.dumps(name) for name in names)
    doubled = parse_edits('{"edits": [{"op": "replace", "line": "ret = \\"\\"", "code": "    ret = \'0\'"}]}', source)
    assert doubled[0].start == 2, "a free model's own spelling of the line is read too"


def test_an_edit_that_names_its_line_by_text_applies_there():
    fixed = apply_edits(SOURCE, parse_edits('{"edits": [{"op": "replace", "line": "if x < 0:", "code": "if x > 0:"},'
                                            '{"op": "insert", "after": "  out = 0", "code": "seen = 0"}]}', SOURCE))
    assert fixed.splitlines()[2:5] == ["    seen = 0", "    for x in xs:", "        if x > 0:"]
    gone = apply_edits(TWICE, parse_edits('{"edits": [{"op": "delete", "line": "return 1  # line 5"}, '
                                          '{"op": "replace", "line": "if not x:", "code": "    return 0"}]}', TWICE))
    assert gone == "def f(x):\n    if x:\n        return 1\n    return 0\n"


@pytest.mark.parametrize("line, reason", [("return 2", "no line of the function reads `return 2`"),
                                          ("return 1", "lines 3, 5 all read `return 1`")])
def test_a_line_named_by_text_must_be_one_line_of_the_function(line, reason):
    with pytest.raises(EditError, match=reason):
        parse_edits('{"edits": [{"op": "delete", "line": "%s"}]}' % line, TWICE)


def test_replace_keeps_every_other_line_and_fixes_a_flush_left_answer():
    fixed = edit('{"edits": [{"op": "replace", "start": 4, "end": 4, "code": "if x > 0:"}]}')
    assert fixed == SOURCE.replace("if x < 0:", "if x > 0:")


def test_fenced_bare_list_and_several_edits_apply_bottom_up():
    text = 'Here you go:\n```json\n[{"op": "delete", "start": 7, "end": 7},\n' \
           ' {"op": "insert", "after": 6, "code": "    return max(out, 0)"},\n' \
           ' {"op": "replace", "start": 2, "end": 2, "code": "    out = 0  # start"}]\n```'
    lines = edit(text).splitlines()
    assert lines[1] == "    out = 0  # start" and lines[-1] == "    return max(out, 0)" and len(lines) == 7


def test_insert_after_a_block_opener_is_indented_into_the_block():
    fixed = edit('{"edits": [{"op": "insert", "after": 3, "code": "if x is None:\\n    continue"}]}')
    assert "    for x in xs:\n        if x is None:\n            continue\n        if x < 0:" in fixed


def test_an_insert_after_a_blank_line_written_flush_left_takes_the_level_of_the_code_after_it():
    fixed = edit('{"edits": [{"op": "insert", "after": 6, "code": "out = abs(out)"}]}')
    assert fixed.endswith("            out += x\n\n    out = abs(out)\n    return out\n")


def test_a_range_wider_than_its_code_is_read_as_the_lines_written_when_it_would_not_parse():
    fixed = edit('{"edits": [{"op": "replace", "start": 4, "end": 5, "code": "        if x > 0:"}]}')
    assert fixed == SOURCE.replace("if x < 0:", "if x > 0:")  # not the `if` without its body
    assert "out += x" not in edit('{"edits": [{"op": "replace", "start": 4, "end": 5, "code": "        pass"}]}')


def test_a_block_header_that_lost_its_colon_gets_it_back():
    fixed = edit('{"edits": [{"op": "replace", "start": 3, "end": 4, "code": "    for x in reversed(xs)"}]}')
    assert fixed == SOURCE.replace("for x in xs:", "for x in reversed(xs):")


def test_an_insert_before_a_replace_of_the_next_line_is_not_an_overlap():
    fixed = edit('{"edits": [{"op": "replace", "start": 7, "end": 7, "code": "    return out"},'
                 ' {"op": "insert", "after": 6, "code": "    out = abs(out)"}]}')
    assert fixed.endswith("            out += x\n\n    out = abs(out)\n    return out\n")



def test_json_after_a_fenced_copy_of_the_view_is_found():
    # seen in the bench: the model copied the numbered view into a fence (whose `[` is not JSON), then gave
    # the edit in prose after it
    text = ("Mark the lines:\n```\n3 |     for x in [xs, ys]:\n4 |         if x < 0:  # N\n```\n"
            'The edit is {"edits": [{"op": "replace", "start": 4, "end": 4, "code": "        if x > 0:"}]}')
    assert edit(text) == SOURCE.replace("if x < 0:", "if x > 0:")


def test_a_json_list_that_is_not_edits_is_passed_over():
    text = '```python\nprint([1, 2])\n```\n```json\n{"op": "delete", "start": 6, "end": 6}\n```'
    assert edit(text) == SOURCE.replace("\n\n", "\n")

@pytest.mark.parametrize("text, reason", [
    ("the bug is on line 4", "no JSON"),
    ('{"edits": [{"op": "replace", "start": 4, "end": 4, "code": "x"', "not JSON"),
    ('{"edits": []}', "at least one edit"),
    ('{"edits": [{"op": "swap", "start": 4, "end": 4}]}', "edit 1: Input tag 'swap'"),
    ('{"edits": [{"op": "replace", "start": "four", "end": 4, "code": "x"}]}', "edit 1 field 'start'"),
    ('{"edits": [{"op": "replace", "start": 8, "end": 8, "code": "x"}]}', "lines 1-7"),
    ('{"edits": [{"op": "replace", "start": 4, "end": 3, "code": "x"}]}', "not a range"),
    ('{"edits": [{"op": "replace", "start": 1, "end": 1, "code": "def total(ys):"}]}', "def` line"),
    ('{"edits": [{"op": "insert", "after": 0, "code": "x = 1"}]}', "lines 1-7"),
    ('{"edits": [{"op": "delete", "start": 3, "end": 5}, {"op": "replace", "start": 4, "end": 4, "code": "x"}]}',
     "overlap"),
])
def test_a_bad_edit_says_why_in_words_for_the_model(text, reason):
    with pytest.raises(EditError, match=reason):
        edit(text)


def test_inserting_right_after_the_def_line_starts_the_body():
    fixed = edit('{"edits": [{"op": "insert", "after": 1, "code": "if not xs:\\n    return 0"}]}')
    assert fixed.startswith("def total(xs):\n    if not xs:\n        return 0\n    out = 0")


def test_replacing_a_blank_line_takes_the_indentation_of_the_code_that_follows():
    fixed = edit('{"edits": [{"op": "replace", "start": 6, "end": 6, "code": "out = abs(out)"}]}')
    assert "            out += x\n    out = abs(out)\n    return out\n" in fixed


def test_a_replacement_keeps_the_replaced_lines_indentation_and_its_own_relative_one():
    fixed = edit('{"edits": [{"op": "replace", "start": 4, "end": 5, "code": "  if x > 0:\\n      out += x"}]}')
    assert "        if x > 0:\n            out += x\n" in fixed


def test_a_replacement_that_repeats_the_def_line_unchanged_starts_after_it():
    fixed = edit('{"edits": [{"op": "replace", "start": 1, "end": 2, "code": "def total(xs):\\n    out = 1"}]}')
    assert fixed.startswith("def total(xs):\n    out = 1\n    for x in xs:")


def test_a_replacement_from_the_def_line_keeps_the_original_signature():
    code = "def total(xs: list) -> int:\\n    out = 1"  # the model's own def line, annotated
    fixed = edit('{"edits": [{"op": "replace", "start": 1, "end": 2, "code": "%s"}]}' % code)
    assert fixed.startswith("def total(xs):\n    out = 1\n    for x in xs:")
    with pytest.raises(EditError, match="def` line"):  # another function's def line is not a copy
        edit('{"edits": [{"op": "replace", "start": 1, "end": 2, "code": "def totals(xs):\\n    out = 1"}]}')


def test_a_flattened_block_takes_the_indentation_of_the_lines_it_replaces():
    fixed = edit('{"edits": [{"op": "replace", "start": 4, "end": 5, "code": "if x > 0:\\nout += x"}]}')
    assert fixed == SOURCE.replace("if x < 0:", "if x > 0:")


def test_lines_whose_first_lost_its_indentation_keep_the_rest_relative():
    code = "out = 0\\n    seen = 0"  # copied from the numbered view, the first line stripped
    fixed = edit('{"edits": [{"op": "replace", "start": 2, "end": 2, "code": "%s"}]}' % code)
    assert fixed.startswith("def total(xs):\n    out = 0\n    seen = 0\n    for x in xs:\n")


def test_an_edit_that_cannot_parse_in_any_reading_comes_back_as_it_was_applied():
    fixed = edit('{"edits": [{"op": "replace", "start": 4, "end": 4, "code": "if x > (0:"}]}')
    assert "        if x > (0:\n" in fixed  # the caller reports the syntax error to the model


def test_lines_copied_from_the_view_after_a_flush_first_line_keep_their_indentation():
    code = "out += abs(x)\\n    return out"  # from inside the `if` out to the function's last line
    fixed = edit('{"edits": [{"op": "replace", "start": 5, "end": 7, "code": "%s"}]}' % code)
    assert fixed.endswith("        if x < 0:\n            out += abs(x)\n    return out\n")
    code = "out += x\\n    out = max(out, 0)"  # an insertion too
    fixed = edit('{"edits": [{"op": "insert", "after": 5, "code": "%s"}]}' % code)
    assert "            out += x\n            out += x\n    out = max(out, 0)\n\n    return out" in fixed


def test_an_elif_after_the_last_line_of_an_if_body_goes_at_the_level_of_its_if():
    code = "elif x > 0:\\n    out -= x"  # inserted after the body's last line: plainly, it would land inside it
    fixed = edit('{"edits": [{"op": "insert", "after": 5, "code": "%s"}]}' % code)
    assert "        if x < 0:\n            out += x\n        elif x > 0:\n            out -= x\n" in fixed
    code = "elif x > 0:\\n    out -= x"  # in place of the blank line 6, whose indentation is `return out`'s
    fixed = edit('{"edits": [{"op": "replace", "start": 6, "end": 6, "code": "%s"}]}' % code)
    assert "        if x < 0:\n            out += x\n        elif x > 0:\n            out -= x\n    return out" in fixed
