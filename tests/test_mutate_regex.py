"""Mutants of regular expressions (bot/agent/search/regex.py), and a real repository whose bug is in a pattern,
repaired by the search in the Docker sandbox before the model is asked."""
from __future__ import annotations

import re

from bot.agent.options import SearchOptions
from bot.agent.search.evidence import read_evidence
from bot.agent.search.mutate import mutants, ranked_mutants
from bot.agent.search.regex import literal_edits, pattern_edits, quoted_values

from .test_fix import ByNameLLM, fix_example, fixed_by_the_search
from .test_fix_realrepo import make_repo

UNESCAPE = '''import re


def unescape(s):
    """Replaces each entity `&name;` with its character; a lone `&` stays."""
    return re.sub(r'&([^;]+;)', lambda m: _character(m.group(1)), s)


def _character(entity):
    if entity in ENTITIES:
        return ENTITIES[entity]
    return "&" + entity


ENTITIES = {"quot;": '"', "amp;": "&", "lt;": "<"}
'''
UNESCAPE_TESTS = '''from html_text import unescape


def test_entity():
    assert unescape("a &lt; b") == "a < b"


def test_lone_ampersand_before_an_entity():
    assert unescape("&a&quot;") == '&a"'


def test_plain():
    assert unescape("plain") == "plain"
'''


def _applied(body: str) -> set[str]:
    return {body[:start] + new + body[end:] for start, end, new in pattern_edits(body)}


def test_a_negated_class_gains_a_character_the_pattern_uses_elsewhere():
    assert "&([^&;]+;)" in _applied("&([^;]+;)")


def test_a_class_loses_one_item_but_never_half_a_range():
    found = _applied("[^/?#]+/")
    assert {"[^?#]+/", "[^/#]+/", "[^/?]+/"} <= found
    assert not any(re.search(r"\[a-?\]|\[-z", p) for p in _applied("[a-z_]"))


def test_quantifiers_groups_and_anchors():
    found = _applied(r"^(\d+):(\d\d)$")
    assert r"^(\d*):(\d\d)$" in found  # + -> *
    assert r"^(\d+)?:(\d\d)$" in found  # an optional group
    assert r"(\d+):(\d\d)$" in found and r"^(\d+):(\d\d)" in found  # anchors dropped
    assert r"^(\d+):(\d\d)?$" in found
    assert "a.*b" in _applied("a.*?b")  # lazy -> greedy


def test_a_word_boundary_before_an_alternative_that_starts_with_a_word_character():
    pattern = "(?sx)\n    [a-z_]+|\n    (?:0x[0-9a-f]+|0+[0-7]+)(?::)?|\n    '[^']*'|(?=z)q"
    boundaries = {p for p in _applied(pattern) if p.count("\\b") == 1}
    assert "(?sx)\n    [a-z_]+|\n    \\b(?:0x[0-9a-f]+|0+[0-7]+)(?::)?|\n    '[^']*'|(?=z)q" in boundaries
    assert "(?sx)\n    \\b[a-z_]+|\n    (?:0x[0-9a-f]+|0+[0-7]+)(?::)?|\n    '[^']*'|(?=z)q" in boundaries
    assert "(?sx)\n    [a-z_]+|\n    (?:0x[0-9a-f]+|\\b0+[0-7]+)(?::)?|\n    '[^']*'|(?=z)q" in boundaries
    assert not any("\\b'" in p or "\\b(?=" in p or "\\b(?sx)" in p or "\\b:" in p for p in boundaries)
    assert r"\bword|\bother" in _applied(r"\bword|other") and r"\b\bword|other" not in _applied(r"\bword|other")


def test_escapes_are_kept_whole():
    assert all("\\" not in p or re.compile(p) for p in _applied(r"\((?P<args>[a-z\]]+)\)"))
    assert r"\((?P<args>[a-z\]]*)\)" in _applied(r"\((?P<args>[a-z\]]+)\)")


def test_only_literals_whose_text_is_their_value_and_that_stay_valid():
    assert list(literal_edits("'a\\\\d+'", "a\\d+")) == []  # escapes in a plain string: text is not value
    assert list(literal_edits("r'a' r'b+'", "ab+")) == []  # implicitly joined literals
    assert list(literal_edits("r'('", "(")) == []  # not a pattern at all
    for start, end, new in literal_edits("r'(a+)[bc]$'", "(a+)[bc]$"):
        body = ("r'(a+)[bc]$'"[:start] + new + "r'(a+)[bc]$'"[end:])[2:-1]
        re.compile(body)


def test_mutants_of_a_function_edit_its_pattern_byte_for_byte():
    source = UNESCAPE.split("\n\n\n")[1]
    assert source.startswith("def unescape")
    found = {m.source for m in mutants(source, "unescape") if m.operator == "regex"}
    assert source.replace("[^;]", "[^&;]") in found
    plain = "def f(s):\n    return s.split('+')\n"  # a plain string outside an `re` call is no pattern
    assert not [m for m in mutants(plain, "f") if m.operator == "regex"]
    called = "def f(s):\n    return re.match('a+b', s)\n"  # but one passed to `re` is
    assert [m for m in mutants(called, "f") if m.operator == "regex"]


def test_the_search_repairs_a_pattern_before_the_model_is_asked(tmp_path, docker_client, sandbox_image):
    """The helper `_character` ranks first (only entities reach it); the search alone runs on each ranked target
    before any model call, and finds the one-edit fix in the second one, `unescape`."""
    root = make_repo(tmp_path / "html", {"html_text.py": UNESCAPE, "tests/test_html_text.py": UNESCAPE_TESTS})
    result = fixed_by_the_search(docker_client, sandbox_image, root)
    assert "-    return re.sub(r'&([^;]+;)'" in result.diff and "+    return re.sub(r'&([^&;]+;)'" in result.diff
    assert result.changed_lines == 1
    assert [t.qualname for t in result.targets][:2] == ["_character", "unescape"]
    assert [(r.target.qualname, r.stop_reason) for r in result.repairs] == [("_character", "search_only"),
                                                                             ("unescape", "passed")]


OCTAL = """import re


def octal_numbers(text):
    \"\"\"The octal literals (`017`) in a JavaScript-like text, as ints; hex literals and names are left alone.\"\"\"
    found = []
    for m in re.finditer(r'''(?x)
            0[xX][0-9a-fA-F]+|
            [a-zA-Z_][a-zA-Z_0-9]*|
            (0+[0-7]+)
            ''', text):
        if m.group(1):
            found.append(int(m.group(1), 8))
    return found
"""
OCTAL_TESTS = """from octal import octal_numbers


def test_not_inside_a_decimal_number():
    assert octal_numbers("017 1017") == [15]


def test_hex_and_names_are_left_alone():
    assert octal_numbers("0x1F abc017 017") == [15]
"""


def test_the_sweep_s_wider_round_reaches_a_fix_ranked_past_slow_mutants(tmp_path, docker_client, sandbox_image):
    """The word boundary `octal_numbers` lacks ranks past the search's `slow_mutants` (8 here, for a short test):
    the sweep's last round, up to four times as many, finds it before any model call."""
    source = OCTAL.split("\n\n\n", 1)[1]
    fixed = source.replace("            (0+[0-7]+)", "            \\b(0+[0-7]+)")
    rank = next(i for i, m in enumerate(mutants(source, "octal_numbers")) if m.source == fixed)
    assert 8 <= rank < 32, rank
    root = make_repo(tmp_path / "octal", {"octal.py": OCTAL, "tests/test_octal.py": OCTAL_TESTS})
    llm = ByNameLLM({})
    result, _ = fix_example(docker_client, sandbox_image, root, llm, search=SearchOptions(slow_mutants=8))
    assert result.status == "fixed", result.message
    assert "+            \\b(0+[0-7]+)" in result.diff and llm.asked == []


CALLS = """import re


def parse_call(expr, variables):
    \"\"\"A call `name(arg,...)` of a tiny expression language: its name and its arguments' values.\"\"\"
    m = re.match(r'^(?P<name>[a-z]+)\\((?P<args>[a-z0-9,]+)\\)$', expr)
    if not m:
        raise ValueError('Unsupported expression %r' % expr)
    args = tuple([
        int(v) if v.isdigit() else variables[v]
        for v in m.group('args').split(',')])
    return m.group('name'), args
"""
CALLS_TESTS = """from calls import parse_call


def test_a_call_with_arguments():
    assert parse_call('f(1,x)', {'x': 2}) == ('f', (1, 2))


def test_a_call_without_arguments():
    assert parse_call('g()', {}) == ('g', ())
"""


def test_an_edit_that_makes_a_pattern_find_the_input_the_failure_quotes_ranks_first():
    source = CALLS.split("\n\n\n")[1]
    feedback = "calls.py:7: in parse_call\n    raise ValueError('Unsupported expression %r' % expr)\n" \
               "E   ValueError: Unsupported expression 'g()'"
    assert quoted_values(feedback) == ["Unsupported expression %r", "g()"]
    first = ranked_mutants(source, "parse_call", evidence=read_evidence(source, feedback))[:2]
    assert {m.source for m in first} == {source.replace("[a-z0-9,]+)", "[a-z0-9,]*)"),  # both find `g()`
                                         source.replace("[a-z0-9,]+)", "[a-z0-9,]+)?")}
    assert not [m for m in ranked_mutants(source, "parse_call")[:2] if m in first]  # with no quote: far down
    assert quoted_values("E   assert b'x' == r'y'") == []  # prefixed literals are not plain inputs
    broken = "def parse_call(expr\n    return re.match(r'a+', expr)\n"  # a syntax error: nothing to edit
    assert ranked_mutants(broken, "parse_call", evidence=read_evidence(broken, feedback)) == []


def test_a_pattern_that_now_matches_and_an_empty_argument_skipped_fix_it_together(tmp_path, docker_client,
                                                                                   sandbox_image):
    """Two edits, neither enough alone: `+` -> `*` lets `g()` match, and then `''.split(',')` hands on `['']`
    (KeyError: ''); the search gives that mutant, whose failure moved to an empty string used, a second edit that
    skips it, before any model call."""
    root = make_repo(tmp_path / "calls", {"calls.py": CALLS, "tests/test_calls.py": CALLS_TESTS})
    llm = ByNameLLM({})
    result, _ = fix_example(docker_client, sandbox_image, root, llm, search=SearchOptions())
    assert result.status == "fixed", result.message
    assert "+    m = re.match(r'^(?P<name>[a-z]+)\\((?P<args>[a-z0-9,]*)\\)$', expr)" in result.diff
    assert "+        for v in m.group('args').split(',') if v])" in result.diff
    assert llm.asked == [] and result.changed_lines == 2
    assert any(", then " in s.edit for r in result.repairs for s in r.searches if s.fixed)
