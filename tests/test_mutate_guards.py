"""Mutants that add a missing None check or catch the exception a failure raised (bot/agent/search/guards.py), and
real repositories whose function crashes on a missing option or on an entity out of range, repaired by the search
in the Docker sandbox before the model is asked."""
from __future__ import annotations

import ast
import difflib

from bot.agent.options import SearchOptions
from bot.agent.search.evidence import Evidence, hot_lines, read_evidence
from bot.agent.search.guards import empty_used, none_uses, raised
from bot.agent.search.mutate import mutants, ranked_mutants

from .test_fix import ByNameLLM, fix_example, fixed_by_the_search
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
ENTITY = '''def entity(text):
    """The character of `&#N;`, or the entity as it was."""
    m = re.match(r"&#([0-9]+);", text)
    if m:
        code = int(m.group(1))
        return chr(code)
    return text
'''
ENTITY_MODULE = "import re\n\n\n" + ENTITY
ENTITY_TESTS = '''from html_text import entity


def test_known():
    assert entity("&#65;") == "A"


def test_out_of_range_stays():
    assert entity("&#2013266066;") == "&#2013266066;"


def test_plain():
    assert entity("abc") == "abc"
'''
ENTITY_FAILURE = '''    def test_out_of_range_stays():
>       assert entity("&#2013266066;") == "&#2013266066;"

html_text.py:6: in entity
>       return chr(code)
E       ValueError: chr() arg not in range(0x110000)
'''


def _added_by_the_search(root, docker_client, sandbox_image, **options) -> list[str]:
    """The lines the fix adds, when the search alone repairs the repository: the model knows no fix."""
    result = fixed_by_the_search(docker_client, sandbox_image, root, **options)
    return [line for line in result.diff.splitlines() if line.startswith("+") and not line.startswith("+++")]


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
            removed = [line for line in difflib.ndiff(source.splitlines(), mutant.splitlines())
                       if line.startswith("- ")]
            assert all(line[2:].strip().startswith("return") for line in removed), removed


def test_the_search_adds_the_missing_check_before_the_model_is_asked(tmp_path, docker_client, sandbox_image):
    root = make_repo(tmp_path / "cli", {"cli.py": OPTIONS, "tests/test_cli.py": OPTIONS_TESTS})
    assert _added_by_the_search(root, docker_client, sandbox_image) == ["+    if value is None:", "+        return []"]


def test_the_exceptions_a_failure_raised_are_read_from_pytest_and_traceback_lines():
    text = "E       ValueError: bad\nE   KeyError: 'x'\nAssertionError: no\nE   MyOwnError: x\nTypeError\n"
    assert raised(text) == ["ValueError", "KeyError", "TypeError"]  # builtins only; the test's assert aside
    assert raised("ValueError in the middle of a line: no") == []


def test_the_raising_statement_is_wrapped_first_and_only_where_the_traceback_shows_it():
    hot = hot_lines(ENTITY, ENTITY_FAILURE)
    found = ranked_mutants(ENTITY, "entity", evidence=Evidence(hot_lines=hot, exceptions=tuple(raised(ENTITY_FAILURE))))
    caught = [m for m in found if m.operator == "except"]
    assert [m.source for m in caught] == [ENTITY.replace(
        "        return chr(code)\n",
        "        try:\n            return chr(code)\n        except ValueError:\n            pass\n")]
    assert found[0] is caught[0]
    assert not [m for m in ranked_mutants(ENTITY, "entity", evidence=Evidence(hot_lines=hot))
                if m.operator == "except"]
    assigned = ranked_mutants(ENTITY, "entity", evidence=Evidence(hot_lines=frozenset({5}),
                                                                  exceptions=("ValueError", "OverflowError")))
    assert ENTITY.replace("        code = int(m.group(1))\n",
                          "        try:\n"
                          "            code = int(m.group(1))\n"
                          "        except (ValueError, OverflowError):\n"
                          "            code = None\n") == assigned[0].source


def test_the_searchs_catch_of_the_exception_is_kept_flagged_when_the_model_finds_nothing_else(tmp_path, docker_client,
                                                                                              sandbox_image):
    # a swallowed exception looks like a wrong fix (bot/agent/antipatterns.py), so it is deferred while the model
    # gets its turn (bot/fix/loop/deferred.py); here, as in the developers' fix of a dev bug, it is the right one
    root = make_repo(tmp_path / "entity", {"html_text.py": ENTITY_MODULE, "tests/test_entity.py": ENTITY_TESTS})
    llm = ByNameLLM({})
    result, _ = fix_example(docker_client, sandbox_image, root, llm, search=SearchOptions())
    assert result.status == "fixed", result.message
    assert [line for line in result.diff.splitlines() if line.startswith("+") and not line.startswith("+++")] == [
        "+        try:", "+            return chr(code)", "+        except ValueError:", "+            pass"]
    [kept] = [r for r in result.repairs if r.status == "fixed"]
    assert kept.made_by == "search" and kept.anti_patterns == ("swallows-exception",) and llm.asked


OPS = '''import operator

CHECKS = {"==": operator.eq, "<": operator.lt}


def scale(x, factor=2, offset=0, low=-100, high=100):
    y = x * factor + offset
    if y < low:
        y = low
    if y > high:
        y = high
    return y - offset - x * (factor - 1)


def build(spec):
    check = CHECKS[spec.lstrip("!")]
    if spec.count("!") > 1:
        return lambda a, b: not check(a, b)
    return check
'''
OPS_TESTS = '''from ops import build, scale


def test_equal():
    assert build("==")(1, 1)


def test_less():
    assert build("<")(1, 2)


def test_not_equal():
    assert build("!==")(scale(1), 2) is True
'''


def test_the_sweeps_short_first_round_reaches_the_second_target_before_the_first_is_searched_through(
        tmp_path, docker_client, sandbox_image):
    """`scale`, which only the failing test runs, ranks first and has dozens of mutants, none a fix; `build`'s
    test of a negated spec is off by one. The sweep's first round tries 12 mutants of each target, so the fix (a
    comparison's edit, among the first of `build`'s) is found before `scale` is searched through."""
    root = make_repo(tmp_path / "ops", {"ops.py": OPS, "tests/test_ops.py": OPS_TESTS})
    llm = ByNameLLM({})
    result, _ = fix_example(docker_client, sandbox_image, root, llm, search=SearchOptions())
    assert result.status == "fixed", result.message
    assert [t.qualname for t in result.targets][:2] == ["scale", "build"]
    swept = [(r.target.qualname, [s.candidates for s in r.searches]) for r in result.repairs
             if r.stop_reason == "search_only"]
    assert swept == [("scale", [12])]
    assert '-    if spec.count("!") > 1:' in result.diff
    assert llm.asked == []


HEADERS = '''def update_headers(session, request_headers):
    for name, value in request_headers.items():
        value = value.decode("utf8")
        if name == "User-Agent" and value.startswith("HTTPie/"):
            continue
        session[name] = value
    return session
'''
HEADERS_TESTS = '''from sessions import update_headers


def test_plain():
    assert update_headers({}, {"Accept": b"*/*"}) == {"Accept": "*/*"}


def test_an_unset_header_is_left_out():
    assert update_headers({}, {"Accept": b"*/*", "Host": None}) == {"Accept": "*/*"}
'''
HEADERS_FAILURE = '''    def test_an_unset_header_is_left_out():
>       assert update_headers({}, {"Accept": b"*/*", "Host": None}) == {"Accept": "*/*"}

sessions.py:3: in update_headers
>       value = value.decode("utf8")
E       AttributeError: 'NoneType' object has no attribute 'decode'
'''


def test_how_a_failure_used_a_none_is_read_from_its_message():
    assert none_uses(HEADERS_FAILURE) == ["attr:decode"]
    assert none_uses("E   TypeError: 'NoneType' object is not subscriptable\n"
                     "TypeError: unsupported operand type(s) for +: 'NoneType' and 'int'") == ["subscript", "operand"]
    assert none_uses("E   AttributeError: 'str' object has no attribute 'decode'") == []


def test_a_none_used_where_the_traceback_shows_is_skipped_in_a_loop_and_returned_outside_one():
    found = ranked_mutants(HEADERS, "update_headers", evidence=read_evidence(HEADERS, HEADERS_FAILURE))
    assert found[0].operator == "skip-none"
    assert found[0].source == HEADERS.replace('        value = value.decode("utf8")\n',
                                              '        if value is None:\n            continue\n'
                                              '        value = value.decode("utf8")\n')
    assert [m for m in found if m.operator == "skip-none"] == found[:1]  # only the name used as the failure says
    outside = "def first(rows):\n    row = rows.get(0)\n    return row[0] + 1\n"
    skipped = [m.source for m in ranked_mutants(outside, "first", evidence=Evidence(hot_lines=frozenset({3}),
                                                                                  nones=("subscript",)))
               if m.operator == "skip-none"]
    assert skipped == ["def first(rows):\n    row = rows.get(0)\n    if row is None:\n        return None\n"
                       "    return row[0] + 1\n"]
    assert not [m for m in ranked_mutants(HEADERS, "update_headers", evidence=Evidence(hot_lines=frozenset({3})))
                if m.operator == "skip-none"]
    nested = ("def total(groups):\n    n = 0\n    for g in groups:\n        for r in g:\n            n += r\n"
              "    return n\n")
    assert [m.source for m in ranked_mutants(nested, "total", evidence=Evidence(hot_lines=frozenset({4}),
                                                                                nones=("iterate",)))
            if m.operator == "skip-none"] == [nested.replace("        for r in g:\n",
                                                             "        if g is None:\n            continue\n"
                                                             "        for r in g:\n")]


def test_the_search_skips_the_none_before_the_model_is_asked(tmp_path, docker_client, sandbox_image):
    root = make_repo(tmp_path / "headers", {"sessions.py": HEADERS, "tests/test_sessions.py": HEADERS_TESTS})
    assert _added_by_the_search(root, docker_client, sandbox_image) == ["+        if value is None:",
                                                                        "+            continue"]


def test_no_check_goes_before_an_elif_it_would_split_the_chain():
    source = ("def kind(selector):\n    if selector is True:\n        return 1\n"
              "    elif selector.type == 2:\n        return 2\n    return 3\n")
    found = ranked_mutants(source, "kind", evidence=Evidence(hot_lines=frozenset({4}), nones=("attr:type",)))
    assert not [m for m in found if m.operator == "skip-none"]


SELECTORS = (
    "def build(spec):\n"
    "    def parse(tokens):\n"
    "        found = []\n"
    "        for t in tokens:\n"
    "            found.append(None if t == '/' else t)\n"
    "        return found\n"
    "\n"
    "    def one(selector):\n"
    "        if isinstance(selector, list):\n"
    "            fs = [one(s) for s in selector]\n"
    "            return ''.join(fs)\n"
    "        elif selector.upper() == 'B':\n"
    "            return 'best'\n"
    "        return selector\n"
    "\n"
    "    return one(parse(spec))\n")
SELECTORS_FAILURE = """    def one(selector):
        if isinstance(selector, list):
>           fs = [one(s) for s in selector]

sel.py:10:
    def one(selector):
        if isinstance(selector, list):
            fs = [one(s) for s in selector]
            return ''.join(fs)
>       elif selector.upper() == 'B':
E       AttributeError: 'NoneType' object has no attribute 'upper'
"""


def test_a_comprehension_that_hands_a_none_on_skips_it():
    """The None was used in the function the comprehension calls (whose check would go before an elif): the
    comprehension the traceback shows leaves that item out, the edit that fixed youtube-dl-8's format selector."""
    evidence = read_evidence(SELECTORS, SELECTORS_FAILURE)
    found = [m.source for m in ranked_mutants(SELECTORS, "build", evidence=evidence) if m.operator == "skip-none"]
    assert found == [SELECTORS.replace("[one(s) for s in selector]", "[one(s) for s in selector if s is not None]")]
    namespace: dict = {}
    exec(found[0], namespace)
    assert namespace["build"](["b", "/", "x"]) == "bestx"
    generator = "def total(xs):\n    return sum(size(x) for x in xs if x)\n"
    assert [m.source for m in ranked_mutants(generator, "total", evidence=Evidence(
        hot_lines=frozenset({2}), nones=("attr:size",))) if m.operator == "skip-none"] == [
        "def total(xs):\n    return sum(size(x) for x in xs if x if x is not None)\n"]
    assert not [m for m in ranked_mutants(SELECTORS, "build", evidence=Evidence(hot_lines=evidence.hot_lines))
                if m.operator == "skip-none"]  # no None in the failure: no such edit


ARGUMENTS = '''def arguments(text, variables):
    return tuple([
        int(v) if v.isdigit() else variables[v]
        for v in text.split(',')])
'''


def test_an_empty_string_used_as_a_key_or_a_number_is_skipped_where_the_traceback_shows_it():
    """`''.split(',')` is `['']`: the comprehension spread over three lines that the traceback shows in its
    element's line gets `if v`, ranked first though the edit lands on its last line."""
    failure = "x.py:3: in <listcomp>\n    int(v) if v.isdigit() else variables[v]\nE   KeyError: ''"
    evidence = read_evidence(ARGUMENTS, failure)
    assert evidence.empty and evidence.skip_conditions() == [""]
    first = ranked_mutants(ARGUMENTS, "arguments", evidence=evidence)[0]
    assert first.source == ARGUMENTS.replace("split(',')])", "split(',') if v])")
    namespace: dict = {}
    exec(first.source, namespace)
    assert namespace["arguments"]("", {}) == () and namespace["arguments"]("1,x", {"x": 2}) == (1, 2)
    assert empty_used("E   ValueError: invalid literal for int() with base 10: ''")
    assert empty_used("ValueError: could not convert string to float: ''")
    assert not empty_used("E   KeyError: 'x'") and not empty_used("E   ValueError: invalid literal for int() "
                                                                   "with base 10: 'a'")
