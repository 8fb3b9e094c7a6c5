"""Mutants of regular expressions (bot/agent/mutate_regex.py), and a real repository whose bug is in a pattern,
repaired by the search in the Docker sandbox before the model is asked."""
from __future__ import annotations

import re

from bot.agent.mutate import mutants
from bot.agent.mutate_regex import literal_edits, pattern_edits
from bot.agent.search import SearchOptions

from .test_fix import ByNameLLM, fix_example
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
    llm = ByNameLLM({})  # it knows no fix: only the search can repair this
    result, _ = fix_example(docker_client, sandbox_image, root, llm, search=SearchOptions())
    assert result.status == "fixed", result.message
    assert "-    return re.sub(r'&([^;]+;)'" in result.diff and "+    return re.sub(r'&([^&;]+;)'" in result.diff
    assert llm.asked == []
    assert result.changed_lines == 1
    assert [t.qualname for t in result.targets][:2] == ["_character", "unescape"]
    assert [(r.target.qualname, r.stop_reason) for r in result.repairs] == [("_character", "search_only"),
                                                                             ("unescape", "passed")]
