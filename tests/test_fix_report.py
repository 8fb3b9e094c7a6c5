"""report.md's account of what the model tried: each answer's change, its outcome and why it failed, and for a run
the model did not fix, a summary of how its answers failed."""
from __future__ import annotations

import dataclasses

from bot.agent.types import Attempt
from bot.fix.verify.report import to_markdown

from .test_github_publish import BEFORE, fix_result


def _attempt(i: int, node: str, code: str | None, outcome: str, feedback: str) -> Attempt:
    return Attempt(iteration=i, node=node, code=code, outcome=outcome, feedback=feedback, prompt_tokens=100,  # type: ignore[arg-type]
                   completion_tokens=20, latency_s=1.0, temperature=0.0)


def test_a_run_the_model_did_not_fix_says_how_each_answer_failed():
    wrong = BEFORE.replace("if score > 90:", "if score > 89:")
    attempts = (_attempt(1, "draft", wrong, "failed", "tests/t.py:5: in test\nE  assert 'C' == 'A'\n"),
                _attempt(2, "syntax", None, "unapplied", "The SEARCH block matches no lines of the code: the code "
                                                          "has no line `if mark > 90:`."),
                dataclasses.replace(_attempt(3, "repeat", wrong, "repeat", "attempt 1"), pointed="return 'A'"))
    base = fix_result(status="not_fixed")
    repair = dataclasses.replace(base.repairs[0], status="not_fixed", stop_reason="iterations", attempts=attempts,
                                 fixed=None)
    md = to_markdown(dataclasses.replace(base, repairs=(repair,), diff=""))
    assert "## What the model could not do" in md
    assert "answered 3 times on 1 target(s) and no answer passed: " in md
    assert "1 failed the tests" in md and "1 did not apply" in md and "1 repeated code already tried" in md
    assert "- if score > 90:; + if score > 89:" in md and "assert 'C' == 'A'" in md
    assert "has no line `if mark > 90:`" in md
    assert "| 3 | repeat, pointed at `return 'A'` |" in md  # the line the suspect-line question named


def test_a_fixed_run_lists_its_attempts_without_the_summary():
    md = to_markdown(fix_result())
    assert "## What the model could not do" not in md
    assert "| 2 | reflect | - if score > 90:; + if score >= 90: | passed |  |" in md


def test_tests_failing_here_that_the_ci_log_does_not_name_are_listed_apart_and_left_out_of_the_pr():
    """With `--from-log`, the repair is for the tests the CI log names: the sandbox may fail more (they needed the
    network the CI had). They are not the PR's failing tests, and report.md lists them apart, by id."""
    from bot.failures import Failure
    from bot.github import body as render

    from .test_github_publish import TEST_ID

    base = fix_result()
    others = tuple(Failure(f"tests/test_net.py::test_fetch_{i}", "tests/test_net.py", 3, "fetch()", None, None,
                           "URLError", "no network") for i in range(23))
    result = dataclasses.replace(base, failures=base.failures + others, failing=(TEST_ID,))
    md = to_markdown(result)
    mine, _, theirs = md.partition("## Failing here too, not named by the CI log (left alone: 23)")
    assert f"- `{TEST_ID}`" in mine and "test_fetch_" not in mine.split("## Failing tests")[1]
    assert "- `tests/test_net.py::test_fetch_19`" in theirs and "test_fetch_20" not in theirs
    assert "- ... and 3 more" in theirs
    assert render.title(result).endswith(f"({TEST_ID})")
    text = render.body(result, signature="0" * 12, run_url=None)
    assert "1 failing test in" in text and "test_fetch_" not in text
    assert "no test that passed before fails in fixbot's sandbox (23 other failing test(s)" in text
    whole = to_markdown(dataclasses.replace(result, failing=()))  # nothing repaired: every failure, as it failed
    assert "Failing here too" not in whole and "- `tests/test_net.py::test_fetch_22` (tests/test_net.py:3)" in whole
