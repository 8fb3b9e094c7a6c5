"""Mutants of string literals (bot/agent/search/strings.py), and a real repository whose bug is a separator,
repaired by the search in the Docker sandbox before the model is asked."""
from __future__ import annotations

import ast

import pytest

from bot.agent.search.mutate import mutants

from .test_fix import fixed_by_the_search
from .test_fix_realrepo import make_repo


def string_mutants(source: str, name: str = "f") -> set[str]:
    return {m.source for m in mutants(source, name) if m.operator == "string"}


@pytest.mark.parametrize("old,new", [
    ("return ' '.join(xs)", "return ''.join(xs)"),  # a separator emptied
    ("return ''.join(xs)", "return ' '.join(xs)"),  # ... or given a space
    ('return "E+"', 'return "E"'),  # a character too many
    ('return "_"', 'return "__"'),  # ... or too few
    ("return ' I'", "return 'I '"),  # a space on the wrong side
    ("return '('", "return '['"),  # the wrong bracket
    ("return 'yes'", "return 'Yes'"),  # the wrong case
])
def test_each_kind_of_string_bug_is_one_edit_away(old, new):
    source = f"def f(xs):\n    {old}\n"
    assert f"def f(xs):\n    {new}\n" in string_mutants(source)


def test_another_literal_of_the_same_function_takes_the_place_of_one():
    source = 'def f(x):\n    return "db" + bin(x)[2:] + "d"\n'
    assert 'def f(x):\n    return "db" + bin(x)[2:] + "db"\n' in string_mutants(source)


def test_a_value_written_twice_is_also_edited_in_both_places_with_the_text_between_kept():
    source = ('def f(word):\n    if len(word) < 3:\n        return " "\n    # the middle stays\n'
              '    return " "\n')
    found = string_mutants(source)
    assert source.replace('" "', '""') in found  # both at once
    assert source.replace('return " "\n    #', 'return ""\n    #') in found  # and each alone


def test_the_case_of_every_word_literal_changes_at_once():
    source = "def f(ok):\n    return 'yes' if ok('(') else 'no'\n"
    assert "def f(ok):\n    return 'Yes' if ok('(') else 'No'\n" in string_mutants(source)


@pytest.mark.parametrize("source", [
    'def f(s):\n    """A docstring."""\n    return s\n',  # the docstring
    "import re\ndef f(s):\n    return re.sub(r'\\s+', ' ', s).strip()\n",  # a pattern: mutate_regex's
    'def f(s):\n    return f"{s}-x"\n',  # an f-string
    "def f(s):\n    return s + '\\n'\n",  # an escape: the text is not the value
    "def f(s):\n    return s + '''abc'''\n",  # triple quotes
    "def f(s):\n    return s + b'abc'.decode()\n",  # bytes
    f"def f(s):\n    return s + '{'x' * 41}'\n",  # a message, not a value
])
def test_docstrings_patterns_fstrings_escapes_bytes_and_messages_are_left_alone(source):
    found = string_mutants(source)
    if "re.sub" in source:
        assert all("r'\\s+'" in m for m in found)  # only the replacement ' ' is edited
        assert found
    else:
        assert found == set()


def test_a_literal_never_takes_a_value_with_its_own_quote_in_it():
    """'"' may not replace "a": it would have to be written with an escape."""
    found = string_mutants("def f(x):\n    return \"a\" + x + '\"'\n")
    firsts = {ast.parse(m).body[0].body[0].value.left.left.value for m in found}
    assert found and '"' not in firsts and "" in firsts


CSV = '''def csv_line(values):
    """The values as one line of comma-separated text, no spaces."""
    return ", ".join(str(v) for v in values)
'''
CSV_TESTS = '''from csvline import csv_line


def test_numbers():
    assert csv_line([1, 2, 3]) == "1,2,3"


def test_one_value():
    assert csv_line(["a"]) == "a"
'''


def test_the_search_repairs_a_separator_before_the_model_is_asked(tmp_path, docker_client, sandbox_image):
    root = make_repo(tmp_path / "csv", {"csvline.py": CSV, "tests/test_csvline.py": CSV_TESTS})
    result = fixed_by_the_search(docker_client, sandbox_image, root)
    assert '-    return ", ".join(' in result.diff and '+    return ",".join(' in result.diff
