"""The words of a fix PR: its title, body, commit message and the note on the source PR.

Everything that came from the repository or the model is rendered through `markdown` (code spans and fences
that cannot be closed from inside, `@` neutralised in plain text). GitHub refuses a body longer than 65,536
characters, so each section has a cap and the diff gets what is left, cut at a line with a note."""
from __future__ import annotations

from bot.failures import Failure
from bot.fix.result import FixResult, TargetRepair
from bot.github.markdown import clip, code, fence, link, plain
from bot.github.signature import marker

BODY_LIMIT = 65_536  # GitHub's limit for a PR body, in characters
_MARGIN = 512  # slack under the limit for the truncation note and rounding
TITLE_LIMIT = 256  # GitHub's limit for an issue or PR title
_MAX_FAILURES = 10
_FAILURE_CHARS = 1_500
_EXPLANATION_CHARS = 4_000
_MAX_ATTEMPT_ROWS = 40


def _fixed(result: FixResult) -> list[TargetRepair]:
    return [r for r in result.repairs if r.status == "fixed"] or list(result.repairs)


def _function(result: FixResult) -> str:
    repairs = _fixed(result)
    if repairs:
        names = [r.target.qualname for r in repairs]
        return names[0] + (f" and {len(names) - 1} more" if len(names) > 1 else "")
    return result.targets[0].qualname if result.targets else "the failing code"


def title(result: FixResult) -> str:
    """`fixbot: fix letter_grade (tests/test_gradebook.py::test_band)`, within GitHub's title limit."""
    tests = result.tests_fixed_for
    which = (tests[0] + (f" and {len(tests) - 1} more" if len(tests) > 1 else "")) if tests else ""
    text = f"fixbot: fix {_function(result)}" + (f" ({which})" if which else "")
    return plain(text, TITLE_LIMIT)


def commit_message(result: FixResult, run_url: str | None) -> str:
    lines = [plain(f"fixbot: fix {_function(result)}", 72), ""]
    lines += [plain(f"Failing: {t}") for t in result.tests_fixed_for[:_MAX_FAILURES]]
    if run_url:
        lines.append(plain(f"Run: {run_url}"))
    lines.append(plain(f"Model: {result.model}"))
    return "\n".join(lines) + "\n"


def _failure(f: Failure) -> str:
    where = f" at {code(f'{f.file}:{f.line}')}" if f.file and f.line else (f" in {code(f.file)}" if f.file else "")
    head = f"- {code(f.test_id)}{where}: {code(f.error_type or 'failure')}"
    details = []
    if f.assertion:
        details.append(f.assertion)
    if f.actual is not None or f.expected is not None:
        details.append(f"actual:   {f.actual}\nexpected: {f.expected}")
    if f.message and f.message not in (f.assertion or ""):
        details.append(f.message)
    if not details:
        return head
    # The fence sits at the top level, after the item: nested in a list item it would depend on indentation.
    return head + "\n\n" + fence(clip("\n".join(details), _FAILURE_CHARS), "text")


def _attempts(result: FixResult) -> list[str]:
    rows = [(r, a) for r in result.repairs for a in r.attempts]
    if not rows:
        return []
    lines = ["#### Attempts", "", "| function | attempt | node | outcome | tokens | seconds |",
             "|---|---|---|---|---|---|"]
    for repair, a in rows[:_MAX_ATTEMPT_ROWS]:
        where = code(f"{repair.target.path}::{repair.target.qualname}", in_table=True)
        lines.append(f"| {where} | {a.iteration} | {a.node} | {a.outcome} | "
                     f"{a.prompt_tokens}+{a.completion_tokens} | {a.latency_s:.1f} |")
    if len(rows) > _MAX_ATTEMPT_ROWS:
        lines.append(f"\n({len(rows) - _MAX_ATTEMPT_ROWS} more attempts not shown)")
    return lines + [""]


def _runs(result: FixResult) -> list[str]:
    if not result.runs:
        return []
    lines = ["#### Test runs in the sandbox", "", "| run | passed | failed | seconds |", "|---|---|---|---|"]
    lines += [f"| {r.purpose} | {r.passed} | {len(r.failed)} | {r.duration_s:.1f} |" for r in result.runs]
    return lines + [""]


def _diff_section(diff: str, budget: int, branch: str | None) -> list[str]:
    """The patch in a fence, cut at a line boundary when it would push the body past `budget` characters."""
    whole = fence(diff, "diff")
    if len(whole) <= budget:
        return ["#### Patch", "", whole, ""]
    lines = diff.splitlines(keepends=True)
    where = f" on branch {code(branch)}" if branch else " in the commit"
    note_room = 200
    kept: list[str] = []
    size = len(fence("", "diff")) + note_room + 64  # the fence may grow by a backtick or two
    for line in lines:
        if size + len(line) > budget:
            break
        kept.append(line)
        size += len(line)
    note = (f"The patch has {len(lines)} lines; the first {len(kept)} are shown here. "
            f"The whole change is{where}.")
    return ["#### Patch", "", fence("".join(kept), "diff"), "", note, ""]


def body(result: FixResult, *, signature: str, run_url: str | None, branch: str | None = None) -> str:
    """The PR body: what failed, why, the patch, how the agent got there, and the hidden signature marker."""
    repairs = _fixed(result)
    where = ", ".join(code(f"{r.target.path}::{r.target.qualname}") for r in repairs) or code(_function(result))
    tests = result.tests_fixed_for
    others = len(result.left_alone) + len(result.set_aside)
    suite = "the whole suite stays green in fixbot's sandbox" if not others else \
        (f"no test that passed before fails in fixbot's sandbox ({others} other failing test(s), which it does not "
         "touch, fail there too)")
    head = [f"### fixbot: a fix for {where}", "",
            f"{len(tests)} failing test{'s' if len(tests) != 1 else ''} in {link('the failed run', run_url)}. "
            f"With the change below {'it passes' if len(tests) == 1 else 'they pass'} and {suite}. "
            "Please review before merging.", ""]
    failures = ["#### Failing tests", ""]
    shown = [f for f in result.failures if f.test_id in tests]
    for f in shown[:_MAX_FAILURES]:
        failures += [_failure(f), ""]
    if len(shown) > _MAX_FAILURES:
        failures += [f"- … and {len(shown) - _MAX_FAILURES} more", ""]
    cause = ["#### Root cause", "", fence(clip(result.explanation, _EXPLANATION_CHARS), "text"), ""] \
        if result.explanation.strip() else []
    if result.held_back:  # the green suite was this environment's: the maintainer's newest installs fail more
        pins = ", ".join(code(pin) for pin in result.held_back)
        cause += ["#### Dependencies held back", "",
                  f"The suite ran with {pins}, the lowest version the project declares: with the newest release "
                  "the project allows, tests failed inside it. Consider an upper bound, or adapting to the newer "
                  "release.", ""]
    flagged = [r for r in repairs if r.anti_patterns]
    if flagged:  # the tests pass, and the change still looks like one that hides the bug: the reviewer must know
        cause += ["#### Review closely", ""]
        cause += [f"- {code(r.target.qualname)}: the change looks like a wrong fix "
                  f"({plain(', '.join(r.anti_patterns))})" for r in flagged] + [""]
    if result.environment:  # failing tests this change does not touch: the environment fails them, not the code
        cause += ["#### Failing because of the environment, not the code (not changed here)", ""]
        cause += [f"- {code(c.what)}: {plain(c.remedy)} ({len(c.tests)} test(s))" for c in result.environment]
        cause += [""]
    tail = _attempts(result) + _runs(result) + [f"Model: {code(result.model)}", "", marker(signature), ""]
    before, after = head + failures + cause, tail
    budget = BODY_LIMIT - _MARGIN - len("\n".join(before + after))
    patch = _diff_section(result.diff, budget, branch) if result.diff.strip() else []
    text = "\n".join(before + patch + after)
    if len(text) > BODY_LIMIT:  # only if the capped sections alone are too long: keep the marker, drop the rest
        text = "\n".join(head + ["(The details were too long for a pull request body.)", "", marker(signature), ""])
    return text


def source_comment(result: FixResult, *, pr_number: int, pr_url: str) -> str:
    """The note on the PR whose run failed, pointing at the fix."""
    tests = result.tests_fixed_for
    more = f" and {len(tests) - 1} more" if len(tests) > 1 else ""
    which = f" (failing: {code(tests[0])}{more})" if tests else ""
    return (f"fixbot opened {link(f'#{pr_number}', pr_url)} with a fix for {code(_function(result))}{which}. "
            "It is a proposal: review it before merging.")
