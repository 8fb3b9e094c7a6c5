"""`fixbot fix` on the demo repositories in the real Docker sandbox. A scripted model answers with each bug's
known fix (the plumbing: reproduce, locate, repair, verify, patch); test_fix_bundled.py does it with the real model."""
from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from bot.agent import Budgets, RepairOptions
from bot.agent.options import SearchOptions
from bot.checkout.repository import load_checkout
from bot.environment.prepare import EnvRequest, prepare_environment
from bot.fix.context import FixRun
from bot.fix.options import FixOptions
from bot.fix.pipeline import fix
from bot.fix.reproduce.command import TestCommand
from bot.fix.reproduce.testrun import run_tests
from bot.fix.verify.report import to_markdown
from bot.llm import Completion
from bot.llm.errors import PromptTooLong
from sandbox import open_sandbox

from .fix_examples import EXAMPLES, FIXES

pytestmark = pytest.mark.timeout(900)
ASK = re.compile(r"corrected function `(\w+)`")


class ByNameLLM:
    """Scripted: answers with the known fix of whichever function the prompt asks for, so the order in which
    targets are tried does not matter; a function it has no fix for gets its question back (a useless answer)."""

    def __init__(self, fixes: dict[str, str]) -> None:
        self.fixes = fixes
        self.asked: list[str] = []
        self.name = "by-name"

    def complete(self, messages, *, temperature=0.0, max_tokens=512, seed=None) -> Completion:
        name = ASK.findall(messages[-1].content)[-1]
        self.asked.append(name)
        text = f"```python\n{self.fixes[name]}```" if name in self.fixes else "I cannot help."
        return Completion(text=text, prompt_tokens=10, completion_tokens=10, latency_s=0.0, model=self.name)


def copy_example(name: str, tmp_path: Path) -> Path:
    dest = tmp_path / name
    shutil.copytree(EXAMPLES / name, dest)
    return dest


def fix_example(docker_client, sandbox_image, root: Path, llm, **options):
    """The pipeline with the scripted model; without the mutation search unless asked (it would find most of
    these one-line fixes before the model is asked, which other tests check)."""
    repair = RepairOptions(budgets=options.pop("budgets", Budgets(iterations=3)), samples=1,
                           search=options.pop("search", None))
    checkout = load_checkout(root)
    env = prepare_environment(checkout, EnvRequest(), client=docker_client, log=print)
    with open_sandbox("docker", image=env.image) as sandbox:
        run = FixRun(llm=llm, sandbox=sandbox, pythonpath=env.pythonpath, setup_s=env.setup_s, say=print)
        result = fix(checkout, run, FixOptions(repair=repair, **options), model=llm.name)
    return result, env


def fixed_by_the_search(docker_client, sandbox_image, root: Path, **options):
    """`fix_example` where only the search can repair (the model knows no fix): the result, fixed, no model asked."""
    llm = ByNameLLM({})
    result, _ = fix_example(docker_client, sandbox_image, root, llm, search=SearchOptions(), **options)
    assert result.status == "fixed", result.message
    assert llm.asked == []
    return result


def suite_after_patch(root: Path, diff: str, image: str, pythonpath) -> object:
    """Applies the patch with git to the copy and runs the whole suite in the sandbox again."""
    proc = subprocess.run(["git", "apply", "-"], cwd=root, input=diff, text=True, capture_output=True)
    assert proc.returncode == 0, proc.stderr
    with open_sandbox("docker", image=image) as sandbox:
        return run_tests(sandbox, load_checkout(root).files, TestCommand(), pythonpath=pythonpath)


@pytest.mark.parametrize("example", sorted(FIXES))
def test_each_example_is_fixed_and_the_patch_turns_the_suite_green(example, tmp_path, docker_client, sandbox_image):
    root = copy_example(example, tmp_path)
    pristine = {p: (root / p).read_bytes() for p in load_checkout(root).files}
    fixes = FIXES[example]
    llm = ByNameLLM({f.qualname.split(".")[-1]: f.fixed for f in fixes})
    result, env = fix_example(docker_client, sandbox_image, root, llm)
    assert result.status == "fixed", result.message
    assert result.exit_code == 0
    # nothing in the user's tree changed
    assert {p: (root / p).read_bytes() for p in pristine} == pristine
    touched = sorted(set(re.findall(r"^\+\+\+ b/(\S+)", result.diff, re.M)))
    assert touched == sorted({f.path for f in fixes})
    assert [r.target.qualname for r in result.repairs if r.status == "fixed"] != []
    assert {r.target.qualname for r in result.repairs if r.status == "fixed"} == {f.qualname for f in fixes}
    assert 1 <= result.changed_lines <= sum(2 + f.added_lines for f in fixes)
    assert result.explanation and result.runs[-1].purpose == "verify" and not result.runs[-1].failed
    after = suite_after_patch(root, result.diff, env.image, env.pythonpath)
    assert after.green and len(after.passed) >= len(result.failures) + 1, after.output


def test_spectrum_blames_the_helper_first(tmp_path, docker_client, sandbox_image):
    """No traceback frame names `apply_discount`: only per-test coverage does, and it must rank it first."""
    root = copy_example("helper-bug", tmp_path)
    llm = ByNameLLM({f.qualname: f.fixed for f in FIXES["helper-bug"]})
    result, _ = fix_example(docker_client, sandbox_image, root, llm)
    assert result.status == "fixed"
    assert result.repairs[0].target.qualname == "apply_discount"
    assert any("ochiai" in reason for reason in result.repairs[0].target.reasons)
    assert llm.asked == ["apply_discount"]


def test_syntax_error_is_the_first_target(tmp_path, docker_client, sandbox_image):
    root = copy_example("syntax-error", tmp_path)
    llm = ByNameLLM({f.qualname: f.fixed for f in FIXES["syntax-error"]})
    result, _ = fix_example(docker_client, sandbox_image, root, llm)
    assert result.status == "fixed"
    assert result.repairs[0].target.broken and result.repairs[0].target.qualname == "to_meters"


def test_a_useless_model_leaves_it_not_fixed_and_reports_every_attempt(tmp_path, docker_client, sandbox_image):
    root = copy_example("one-module", tmp_path)
    result, _ = fix_example(docker_client, sandbox_image, root, ByNameLLM({}), max_targets=2)
    assert result.status == "not_fixed" and result.exit_code == 1
    assert result.diff == ""
    assert len(result.repairs) >= 1 and all(len(r.attempts) == 3 for r in result.repairs if r.attempts)


class RaisingOnceLLM(ByNameLLM):
    """Raises `error` the first time it is asked: what no model backend raises (a bug of fixbot's own, in effect),
    or what a backend raises for one prompt."""

    def __init__(self, fixes: dict[str, str], error: Exception) -> None:
        super().__init__(fixes)
        self.error = error

    def complete(self, messages, **options) -> Completion:
        if not self.asked:
            self.asked.append("raised")
            raise self.error
        return super().complete(messages, **options)


def test_a_bug_of_fixbot_s_own_in_one_target_does_not_end_the_run(tmp_path, docker_client, sandbox_image, capsys):
    root = copy_example("helper-bug", tmp_path)
    llm = RaisingOnceLLM({f.qualname: f.fixed for f in FIXES["helper-bug"]}, RuntimeError("an unexpected bug"))
    result, _ = fix_example(docker_client, sandbox_image, root, llm, max_targets=3)
    first, *rest = result.repairs
    assert (first.target.qualname, first.stop_reason) == ("apply_discount", "internal_error")
    assert rest and llm.asked[1:], "the run went on to the next target"
    out = capsys.readouterr().out
    assert "fixbot failed on this target (RuntimeError: an unexpected bug" in out and "Traceback" in out



def test_a_prompt_too_long_for_the_model_ends_that_target_not_the_run(tmp_path, docker_client, sandbox_image,
                                                                       capsys):
    root = copy_example("helper-bug", tmp_path)
    too_long = PromptTooLong("scripted: Requested tokens (4216) exceed context window of 4096")  # as backends say
    llm = RaisingOnceLLM({f.qualname: f.fixed for f in FIXES["helper-bug"]}, too_long)
    result, _ = fix_example(docker_client, sandbox_image, root, llm, max_targets=3)
    first, *rest = result.repairs
    assert (first.target.qualname, first.stop_reason) == ("apply_discount", "prompt_too_long")
    assert rest and llm.asked[1:], "the run went on to the next target"
    assert result.exit_code != 2
    assert "the prompt for apply_discount does not fit the model's context" in capsys.readouterr().out


CALC_BROKEN = "RATE = 0.2\n\n\ndef net(amount):\n    return amount * (1 - RATE\n\n\ndef gross(amount):\n" \
              "    return amount / (1 - RATE)\n"
CALC_CONFTEST = "import pytest\n\nimport calc\n\n\n@pytest.fixture\ndef rate():\n    return calc.RATE\n"
CALC_TESTS = "import calc\n\n\ndef test_net(rate):\n    assert calc.net(100) == 100 * (1 - rate)\n\n\n" \
             "def test_gross():\n    assert round(calc.gross(80), 6) == 100\n"


@pytest.mark.parametrize("tests", ["tests", "tests/unit"])
def test_a_bug_that_keeps_the_conftest_from_loading_is_repaired_not_refused(tests, tmp_path, docker_client,
                                                                          sandbox_image):
    """A conftest whose import of the project raises: pytest stops before any test when it is one pytest loads
    first (`tests/conftest.py`: a usage error), and reports a collection error of the session or the directory
    when it is deeper. Either way the conftest is the failing test, the project's code that raised the target."""
    root = tmp_path / "calc"
    for path, text in {"calc.py": CALC_BROKEN, f"{tests}/conftest.py": CALC_CONFTEST,
                       f"{tests}/test_calc.py": CALC_TESTS}.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)
    fixed = "def net(amount):\n    return amount * (1 - RATE)\n"
    result, env = fix_example(docker_client, sandbox_image, root, ByNameLLM({"net": fixed}))
    assert result.status == "fixed", result.message
    assert [(f.test_id, f.file, f.line, f.error_type) for f in result.failures] == [
        (f"{tests}/conftest.py", "calc.py", 5, "SyntaxError")]
    assert 'File "calc.py", line 5' in (result.failures[0].message or ""), "the sandbox's work dir is not shown"
    assert [r.target.qualname for r in result.repairs] == ["net"] and result.changed_lines == 1
    after = suite_after_patch(root, result.diff, env.image, env.pythonpath)
    assert after.green and after.passed == {f"{tests}/test_calc.py::test_net", f"{tests}/test_calc.py::test_gross"}


STATS = '''def mean(values):
    """The arithmetic mean.

    >>> mean([1, 2, 3, 4])
    2.5
    """
    return sum(values) / (len(values) + 1)
'''


@pytest.mark.parametrize("answer", ["cheat", "fix"])
def test_a_failing_doctest_is_repaired_in_the_code_never_in_its_docstring(answer, tmp_path, docker_client,
                                                                          sandbox_image):
    """pytest's --doctest-modules: the failing test is `stats.py::stats.mean`, in the module to repair. An answer
    that rewrites the expected output instead passes nothing: the agent puts the original docstring back in
    (bot/agent/source/code.py)."""
    root = tmp_path / "stats"
    root.mkdir()
    (root / "stats.py").write_text(STATS)
    (root / "pytest.ini").write_text("[pytest]\naddopts = --doctest-modules\n")
    (root / "test_stats.py").write_text("from stats import mean\n\n\ndef test_zeros():\n    assert mean([0, 0]) == 0\n")
    # the cheat: the expected output rewritten to what a code change that fixes nothing returns
    answers = {"cheat": STATS.replace("    2.5\n", "    2.0\n").replace("(len(values) + 1)", "(1 + len(values))"),
               "fix": "def mean(values):\n    return sum(values) / len(values)\n"}
    result, _ = fix_example(docker_client, sandbox_image, root, ByNameLLM({"mean": answers[answer]}))
    assert [f.test_id for f in result.failures] == ["stats.py::stats.mean"]
    if answer == "cheat":
        assert result.status == "not_fixed" and result.diff == "", result.diff
        return
    assert result.status == "fixed", result.message
    assert result.diff.count("\n-    ") == 1 and "+    return sum(values) / len(values)" in result.diff

def test_green_and_flaky_suites_have_nothing_to_fix(tmp_path, docker_client, sandbox_image):
    green = tmp_path / "green"
    (green / "tests").mkdir(parents=True)
    (green / "calc.py").write_text("def add(a, b):\n    return a + b\n")
    (green / "tests" / "test_calc.py").write_text("from calc import add\n\n\n"
                                                  "def test_add():\n    assert add(1, 2) == 3\n")
    result, _ = fix_example(docker_client, sandbox_image, green, ByNameLLM({}))
    assert result.status == "nothing_to_fix" and result.exit_code == 3
    # fails in the first run only (that run measures coverage, the re-run does not): flaky, never "fixed"
    (green / "tests" / "test_flaky.py").write_text(
        "import os\n\n\ndef test_sometimes():\n    assert os.environ.get('FIXBOT_COVERAGE') != '1'\n")
    result, _ = fix_example(docker_client, sandbox_image, green, ByNameLLM({}))
    assert result.status == "flaky" and result.exit_code == 3
    assert result.flaky == ("tests/test_flaky.py::test_sometimes",)


BY_SEARCH = {"class-method": {"Cart.total"}, "helper-bug": {"apply_discount"}, "one-module": {"letter_grade"},
             "missing-branch": set(),  # a new branch is more than one edit away
             "syntax-error": set(),  # a function that does not parse has no mutants
             "third-party-dep": set(),  # more than one edit away
             "two-bugs": {"Box.around", "manhattan"}}


@pytest.mark.parametrize("example", sorted(FIXES))
def test_the_search_fixes_one_edit_examples_before_asking_the_model(example, tmp_path, docker_client, sandbox_image):
    """With the search on (the default), a bug one edit away is fixed with no model call; the rest go on to
    the model, and every fix still passes the whole suite."""
    root = copy_example(example, tmp_path)
    llm = ByNameLLM({f.qualname.split(".")[-1]: f.fixed for f in FIXES[example]})
    result, env = fix_example(docker_client, sandbox_image, root, llm, search=SearchOptions())
    assert result.status == "fixed", result.message
    by_search = {r.target.qualname for r in result.repairs if r.status == "fixed" and any(s.fixed for s in r.searches)}
    assert by_search == BY_SEARCH[example]
    makers = {r.target.qualname: r.made_by for r in result.repairs if r.status == "fixed"}
    assert makers == {q: "search" if q in BY_SEARCH[example] else "model" for q in makers}
    assert not {name.split(".")[-1] for name in by_search} & set(llm.asked)
    assert suite_after_patch(root, result.diff, env.image, env.pythonpath).failed == frozenset()
    assert "## Mutation search" in to_markdown(result)
