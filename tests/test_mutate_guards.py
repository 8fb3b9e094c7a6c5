"""Mutants that add a missing None check (bot/agent/mutate_guards.py), and a real repository whose function
crashes on a missing option, repaired by the search in the Docker sandbox before the model is asked."""
from __future__ import annotations

import ast
import difflib

from bot.agent.mutate import mutants
from bot.agent.search import SearchOptions

from .test_fix import ByNameLLM, fix_example
from .test_fix_realrepo import make_repo

OPTIONS = '''def bool_option(params, option, name, separator=None):
    value = params.get(name)
    assert isinstance(value, bool)
    if separator:
        return [option + separator + str(value).lower()]
    return [option, str(value).lower()]
'''
OPTIONS_TESTS = '''from cli import bool_option


def test_true():
    assert bool_option({"x": True}, "--x", "x") == ["--x", "true"]


def test_separator():
    assert bool_option({"x": False}, "--x", "x", "=") == ["--x=false"]


def test_missing():
    assert bool_option({}, "--x", "x") == []
'''
DATE = '''def as_text(stamp):
    """The stamp as text; None when there is none."""
    text = None
    for fmt in FORMATS:
        text = stamp.get(fmt)
    return str(text)
'''


def _guards(source: str, name: str) -> set[str]:
    return {m.source for m in mutants(source, name) if m.operator == "guard"}


def test_a_check_after_the_assignment_returns_the_empty_value_the_function_returns():
    found = _guards(OPTIONS, "bool_option")
    fixed = OPTIONS.replace("params.get(name)\n", "params.get(name)\n    if value is None:\n        return []\n")
    assert fixed in found
    assert OPTIONS.replace("    value =", "    if params is None:\n        return None\n    value =") in found
    assert not any("if self is None" in m for m in found)


def test_a_return_guarded_by_its_argument():
    found = _guards(DATE, "as_text")
    assert DATE.replace("    return str(text)", "    if text is not None:\n        return str(text)") in found
    assert DATE.replace("    text = None\n", "    if stamp is None:\n        return None\n    text = None\n") in found
    assert all(ast.get_docstring(ast.parse(m).body[0]) for m in found)  # the docstring stays first


def test_every_guard_mutant_parses_and_only_adds_lines_or_indents_a_return():
    for source, name in ((OPTIONS, "bool_option"), (DATE, "as_text")):
        for mutant in _guards(source, name):
            ast.parse(mutant)
            removed = [l for l in difflib.ndiff(source.splitlines(), mutant.splitlines()) if l.startswith("- ")]
            assert all(line[2:].strip().startswith("return") for line in removed), removed


def test_the_search_adds_the_missing_check_before_the_model_is_asked(tmp_path, docker_client, sandbox_image):
    root = make_repo(tmp_path / "cli", {"cli.py": OPTIONS, "tests/test_cli.py": OPTIONS_TESTS})
    llm = ByNameLLM({})  # it knows no fix: only the search can repair this
    result, _ = fix_example(docker_client, sandbox_image, root, llm, search=SearchOptions())
    assert result.status == "fixed", result.message
    added = [line for line in result.diff.splitlines() if line.startswith("+") and not line.startswith("+++")]
    assert added == ["+    if value is None:", "+        return []"]
    assert llm.asked == []
