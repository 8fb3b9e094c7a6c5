"""A function the tests use and the project does not define yet (bot/fix/repair/missing.py): found from the failure,
stubbed, written by the model, verified like any fix; never a stub in a patch or a best attempt."""
from __future__ import annotations

import ast

from bot.failures import Failure
from bot.fix.repair.missing import MissingName, is_stub, missing_names, stub, with_stubs, without_stubs

from .test_fix import ByNameLLM, fix_example, suite_after_patch
from .test_fix_realrepo import make_repo

TEXTUTIL = '''\
def words(text):
    """The words of text, split on white space."""
    return text.split()
'''
TEXT_TESTS = '''\
from textutil import shorten, words


def test_words():
    assert words("a b  c") == ["a", "b", "c"]


def test_shorten():
    assert shorten("hello world", 8) == "hello..."
    assert shorten("hi", 8) == "hi"
    assert shorten("hello world", 8, marker="~") == "hello w~"
'''
SHORTEN = '''\
def shorten(text, width, marker="..."):
    if len(text) <= width:
        return text
    return text[:width - len(marker)] + marker
'''


def _failure(test_id: str, error_type: str, message: str) -> Failure:
    return Failure(test_id, None, None, None, None, None, error_type, message)


def test_an_import_error_names_the_module_and_the_function():
    files = {"textutil.py": TEXTUTIL.encode(), "tests/test_text.py": TEXT_TESTS.encode()}
    failure = _failure("tests/test_text.py", "ImportError",
                       "cannot import name 'shorten' from 'textutil' (/work/textutil.py)")
    found = missing_names([failure], files, lambda p: not p.startswith("tests/"))
    assert found == [MissingName("textutil.py", "shorten")]


def test_an_attribute_error_of_a_module_in_a_package_is_found_too():
    files = {"src/pkg/util.py": b"X = 1\n", "tests/test_u.py": b"from pkg import util\n\n\n"
                                                                b"def test_it():\n    assert util.double(2) == 4\n"}
    failure = _failure("tests/test_u.py::test_it", "AttributeError", "module 'pkg.util' has no attribute 'double'")
    assert missing_names([failure], files, lambda p: p.startswith("src/")) == \
        [MissingName("src/pkg/util.py", "double")]


def test_names_that_are_not_missing_functions_of_project_code_get_no_stub():
    files = {"textutil.py": TEXTUTIL.encode() + b"\nif False:\n    shorten = None\n",
             "tests/test_text.py": TEXT_TESTS.encode() + b"\nfrom textutil import Shape\n"}
    project = lambda p: not p.startswith("tests/")  # noqa: E731
    defined = _failure("tests/test_text.py", "ImportError", "cannot import name 'shorten' from 'textutil'")
    a_class = _failure("tests/test_text.py", "ImportError", "cannot import name 'Shape' from 'textutil'")
    installed = _failure("tests/test_text.py", "ImportError", "cannot import name 'shorten' from 'requests'")
    assert missing_names([defined, a_class, installed], files, project) == []
    # never called by the test: nothing says it is a function
    files["textutil.py"] = TEXTUTIL.encode()
    files["tests/test_text.py"] = b"from textutil import LIMIT\n"
    assert missing_names([_failure("tests/test_text.py", "ImportError",
                                   "cannot import name 'limit' from 'textutil'")], files, project) == []


def test_stubs_are_appended_and_taken_out_byte_for_byte():
    item = MissingName("textutil.py", "shorten")
    other = MissingName("textutil.py", "squash")
    for original in (TEXTUTIL.encode(), TEXTUTIL.encode().rstrip(b"\n"), b""):
        files = {"textutil.py": original}
        stubbed = with_stubs(files, [item, other])
        text = stubbed["textutil.py"].decode()
        assert text.startswith(original.decode()) and is_stub(stub(item))
        ast.parse(text)
        assert {n.name for n in ast.parse(text).body if isinstance(n, ast.FunctionDef)} >= {"shorten", "squash"}
        assert "def shorten(*args, **kwargs):" in text
        assert without_stubs(stubbed, files, [item, other]) == files
    # a stub a verified fix replaced stays replaced; the other goes
    written = with_stubs({"textutil.py": TEXTUTIL.encode()}, [item])
    written["textutil.py"] = written["textutil.py"].replace(stub(item).encode(), SHORTEN.encode())
    both = with_stubs({"textutil.py": written["textutil.py"]}, [other])
    assert without_stubs(both, {"textutil.py": TEXTUTIL.encode()}, [item, other]) == written


def test_the_missing_function_is_written_by_the_model_and_verified(tmp_path, docker_client, sandbox_image):
    root = make_repo(tmp_path / "text", {"textutil.py": TEXTUTIL, "tests/test_text.py": TEXT_TESTS})
    llm = ByNameLLM({"shorten": SHORTEN})
    result, env = fix_example(docker_client, sandbox_image, root, llm)
    assert result.status == "fixed", result.message
    assert llm.asked[0] == "shorten"
    assert "+def shorten(text, width, marker=\"...\"):" in result.diff
    assert "NotImplementedError" not in result.diff and "-" not in {line[:1] for line in result.diff.splitlines()
                                                                   if not line.startswith("---")}
    assert "`shorten` was not defined in textutil.py, but the tests use it" in result.explanation
    # test_words passed once the module imported: the verification held it
    assert [(r.purpose, r.passed) for r in result.runs][2:4] == [("with stubs", 1), ("verify", 2)]
    assert suite_after_patch(root, result.diff, env.image, env.pythonpath).green


def test_a_stub_the_model_cannot_write_is_in_neither_the_patch_nor_the_best_attempt(tmp_path, docker_client,
                                                                                      sandbox_image):
    root = make_repo(tmp_path / "text", {"textutil.py": TEXTUTIL, "tests/test_text.py": TEXT_TESTS})
    result, _ = fix_example(docker_client, sandbox_image, root, ByNameLLM({}))
    assert result.status == "not_fixed" and result.diff == ""
    assert result.best is None
    assert {r.target.qualname for r in result.repairs} == {"shorten"}  # in each pass (turns.another_pass)


def test_the_model_is_asked_to_write_a_stub_not_to_find_a_bug():
    from bot.agent import Briefing, Target
    from bot.agent.source.code import signature_problem, unwritten
    from bot.agent.state import Seen
    from bot.agent.steps.prompts import WRITE_SYSTEM, draft, repeat

    source = stub(MissingName("textutil.py", "shorten"))
    assert unwritten(source) and unwritten('def f(x):\n    """Doc."""\n    raise NotImplementedError\n')
    assert not unwritten(TEXTUTIL) and not unwritten("def f(x):\n    if x:\n        raise NotImplementedError\n")
    target = Target(name="shorten", source=source, context="")
    system, user = draft(target, Briefing(summary="NotImplementedError", tests=TEXT_TESTS))
    assert system.content == WRITE_SYSTEM and "is not written yet" in user.content and "has a bug" not in user.content
    assert "*args" not in user.content  # a small model keeps the parameters it is shown
    again = repeat(target, Briefing(summary="", tests=""), Seen("original", 0), "NotImplementedError", [])
    assert "still the stub" in again[-1].content
    # the stub's open parameters give way to the ones the tests use; a written function's do not
    assert signature_problem(SHORTEN, source, "shorten") is None
    assert signature_problem(SHORTEN.replace("marker=", "mark="), SHORTEN, "shorten") is not None


def test_tests_that_patch_a_name_the_project_lacks_say_why_no_target_was_tried(tmp_path, docker_client,
                                                                                sandbox_image):
    """The patch fails inside unittest.mock before a line of project code runs: no traceback frame or covered line
    to blame, and a name only patched (never called) is not stubbed. The report says so, with the first error."""
    tests = ("from unittest import mock\n\nfrom textutil import words\n\n\n"
             "@mock.patch('textutil.max_width', return_value=3)\n"
             "def test_words_are_cut(max_width):\n    assert words('a bb') == ['a', 'bb']\n")
    root = make_repo(tmp_path / "text", {"textutil.py": TEXTUTIL, "tests/test_text.py": tests})
    llm = ByNameLLM({})
    result, _ = fix_example(docker_client, sandbox_image, root, llm)
    assert result.status == "not_fixed" and result.exit_code == 1 and llm.asked == []
    assert result.message.startswith("1 test(s) still fail after trying 0 target(s): nothing in their tracebacks "
                                     "or coverage points at project code (first: tests/test_text.py::"
                                     "test_words_are_cut: AttributeError: "), result.message
    assert "does not have the attribute 'max_width'" in result.message
