"""A method the tests call by a name its class lacks, beside the method that name renames (bot/fix/repair/renames.py):
renamed, with the class's own calls, before any model call; kept only when the tests pass and nothing breaks."""
from __future__ import annotations

from bot.failures import Failure
from bot.fix.repair.harness import with_code
from bot.fix.repair.renames import Rename, closest_method, find_renames, rename_repair

from .test_fix import ByNameLLM, fix_example, suite_after_patch
from .test_fix_realrepo import make_repo

CHAPTERS = '''\
import re


class Extractor:
    def _chapters(self, text):
        return [int(m) for m in re.findall(r"(\\d+):", text)]

    def extract(self, text):
        # `_chapters` in a comment and "self._chapters" in a string stay as they are
        return {"chapters": self._chapters(text), "how": "self._chapters"}

    @classmethod
    def count(cls, text):
        return len(cls._chapters(cls(), text))


class Other:
    def _chapters(self, text):
        return []
'''
CHAPTER_TESTS = '''\
from chapters import Extractor


def test_from_description():
    assert Extractor()._chapters_from_description("1: a 2: b") == [1, 2]


def test_extract():
    assert Extractor().extract("3: c")["chapters"] == [3]
    assert Extractor.count("1: a 2: b") == 2
'''


def _lacking(test_id: str, cls: str, name: str) -> Failure:
    return Failure(test_id, None, None, None, None, None, "AttributeError",
                   f"'{cls}' object has no attribute '{name}'")


def test_the_method_a_new_name_extends_or_respells_is_found():
    assert closest_method(["_chapters", "extract", "__init__"], "_chapters_from_description") == "_chapters"
    assert closest_method(["get_colour", "extract"], "get_color") == "get_colour"
    assert closest_method(["extract", "__init__"], "_chapters_from_description") is None
    assert closest_method(["to_dict"], "to_json") is None


def test_a_rename_is_found_for_the_class_the_failure_names():
    files = {"chapters.py": CHAPTERS.encode(), "tests/test_chapters.py": CHAPTER_TESTS.encode()}
    failure = _lacking("tests/test_chapters.py::test_from_description", "Extractor", "_chapters_from_description")
    found = find_renames([failure], files, lambda p: not p.startswith("tests/"))
    assert found == [Rename(path="chapters.py", cls="Extractor", old="_chapters", new="_chapters_from_description",
                            tests=("tests/test_chapters.py::test_from_description",))]
    assert find_renames([failure], files, lambda p: False) == []  # not project code
    calls_old = CHAPTER_TESTS + "\n\ndef test_old():\n    assert Extractor()._chapters('1:') == [1]\n"
    assert find_renames([failure], {**files, "tests/test_chapters.py": calls_old.encode()},
                        lambda p: not p.startswith("tests/")) == []  # the tests still use the old name


def test_a_rename_changes_the_definition_and_the_class_s_own_calls_only():
    files = {"chapters.py": CHAPTERS.encode()}
    rename = Rename(path="chapters.py", cls="Extractor", old="_chapters", new="_chapters_from_description",
                    tests=("t",))
    repair = rename_repair(files, rename)
    assert repair.target.qualname == "Extractor" and (repair.target.start, repair.target.end) == (4, 14)
    assert repair.stop_reason == "renamed" and repair.changed_lines == 3
    after = repair.fixed or ""
    assert "def _chapters_from_description(self, text):" in after
    assert "self._chapters_from_description(text)" in after and "cls._chapters_from_description(cls(), text)" in after
    assert '"self._chapters"' in after and "# `_chapters` in a comment" in after
    module = with_code(files, repair.spans, after)["chapters.py"].decode()
    assert module.endswith("class Other:\n    def _chapters(self, text):\n        return []\n")  # another class's
    assert module.count("_chapters_from_description") == 3


def test_the_rename_fixes_the_tests_without_asking_the_model(tmp_path, docker_client, sandbox_image):
    root = make_repo(tmp_path / "chapters", {"chapters.py": CHAPTERS, "tests/test_chapters.py": CHAPTER_TESTS})
    llm = ByNameLLM({})
    result, env = fix_example(docker_client, sandbox_image, root, llm)
    assert result.status == "fixed", result.message
    assert llm.asked == []
    changed = [line for line in result.diff.splitlines() if line[:1] in "+-" and line[:3] not in ("+++", "---")]
    assert len(changed) == 6 and "-    def _chapters(self, text):" in changed \
        and "+    def _chapters_from_description(self, text):" in changed
    assert result.explanation == (
        "`Extractor` (chapters.py) has no method `_chapters_from_description`, which the tests call "
        "(`tests/test_chapters.py::test_from_description`); its method `_chapters` is renamed to it, with the "
        "class's 2 calls of it.")
    assert [r.purpose for r in result.runs][-1] == "renamed"
    assert suite_after_patch(root, result.diff, env.image, env.pythonpath).green


def test_a_rename_that_breaks_another_test_is_not_kept(tmp_path, docker_client, sandbox_image):
    uses_old = ("from chapters import Extractor\n\n\n"
                "def test_old_name():\n    assert Extractor()._chapters('4:') == [4]\n")
    root = make_repo(tmp_path / "chapters", {"chapters.py": CHAPTERS, "tests/test_chapters.py": CHAPTER_TESTS,
                                             "tests/test_old.py": uses_old})
    result, _ = fix_example(docker_client, sandbox_image, root, ByNameLLM({}))
    assert result.status == "not_fixed" and result.diff == ""
    assert ("renamed", 1) in [(r.purpose, len(r.failed)) for r in result.runs]  # test_old_name broke: undone
