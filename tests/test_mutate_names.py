"""Mutants for a name the failure says is not defined (bot/agent/search/names.py), and a repository whose bug is
a misspelt variable, repaired by the search in the Docker sandbox before the model is asked."""
from __future__ import annotations

from bot.agent.options import SearchOptions
from bot.agent.search.evidence import Evidence
from bot.agent.search.guards import raised
from bot.agent.search.mutate import ranked_mutants
from bot.agent.search.names import undefined

from .test_fix import ByNameLLM, fix_example
from .test_fix_realrepo import make_repo

WRITER = '''import sys


def get_write(output):
    """A function that writes to stderr (None) or appends to the file named `output`."""
    if output is None:
        def write(s):
            sys.stderr.write(s)
    else:
        def write(s):
            with open(output_path, "a") as output_file:
                output_file.write(s)
    return write
'''
WRITER_TESTS = '''from writer import get_write


def test_appends_to_a_file(tmp_path):
    path = tmp_path / "log.txt"
    get_write(str(path))("hello")
    assert path.read_text() == "hello"


def test_stderr(capsys):
    get_write(None)("x")
    assert capsys.readouterr().err == "x"
'''


def test_the_names_a_name_error_reports():
    feedback = "E   NameError: name 'output_path' is not defined\nNameError: free variable 'n' is not defined"
    assert undefined(feedback) == ["output_path", "n"]
    assert raised(feedback) == []  # catching a NameError never fixes one
    assert undefined("E   AssertionError: assert 1 == 2") == []


def test_a_misspelt_name_is_replaced_by_the_closest_bound_name_first():
    source = WRITER.split("\n\n\n", 1)[1]
    found = ranked_mutants(source, "get_write", evidence=Evidence(hot_lines=frozenset({8}), undefined=("output_path",)))
    assert found[0].source == source.replace("open(output_path", "open(output")
    assert found[0].operator == "undefined" and found[0].description == "line 8: `output_path` -> `output`"
    assert not [m for m in ranked_mutants(source, "get_write") if m.operator == "undefined"]  # no NameError: none


def test_a_forgotten_standard_library_import_is_added_first():
    source = 'def encode(data):\n    """Form data as bytes."""\n    return urllib.parse.urlencode(data).encode()\n'
    found = ranked_mutants(source, "encode", evidence=Evidence(hot_lines=frozenset({3}), undefined=("urllib",)))
    assert found[0].operator == "import" and found[0].source == source.replace(
        '    return', '    import urllib.parse\n    return')
    ns: dict = {}
    exec(found[0].source, ns)
    assert ns["encode"]({"a": "b c"}) == b"a=b+c"
    # a name that is no standard-library module: renamed, never imported
    assert [m.operator for m in ranked_mutants(source.replace("urllib", "requests"), "encode",
                                               evidence=Evidence(undefined=("requests",)))].count("import") == 0


def test_the_search_repairs_a_misspelt_name_before_the_model_is_asked(tmp_path, docker_client, sandbox_image):
    root = make_repo(tmp_path / "writer", {"writer.py": WRITER, "tests/test_writer.py": WRITER_TESTS})
    llm = ByNameLLM({})  # it knows no fix: only the search can repair this
    result, _ = fix_example(docker_client, sandbox_image, root, llm, search=SearchOptions())
    assert result.status == "fixed", result.message
    assert '+            with open(output, "a") as output_file:' in result.diff and llm.asked == []
