"""What the agent is told about a repository target (its code, what surrounds it, the tests that blame it), and
the short root-cause explanation written once it is fixed. A two-span repair (a caller and the helper it calls)
is one target of the agent's: both functions, the caller first (bot/agent/source/parts.py)."""
from __future__ import annotations

import ast
import re
import textwrap
from collections.abc import Iterable, Mapping, Sequence

from bot.agent import Target
from bot.agent.source.code import changed_lines
from bot.agent.source.parts import join_parts
from bot.agent.steps.prompts import MAX_TEST_LINES
from bot.failures import Failure
from bot.feedback import TIMEOUT_ERROR
from bot.fix.locate.spans import function_spans, names_of
from bot.fix.repair.callees import callee_signatures
from bot.fix.repair.missing import is_stub
from bot.fix.types import CodeTarget, TestRun

MAX_TESTS_SHOWN = 3
IMPORT_LINE = re.compile(r"^(import|from)\s+\S")


def _text(files: Mapping[str, bytes], path: str) -> str:
    return files[path].decode("utf-8", "surrogateescape")


def _span_text(files: Mapping[str, bytes], target: CodeTarget) -> str:
    lines = _text(files, target.path).splitlines(keepends=True)
    return textwrap.dedent("".join(lines[target.start - 1:target.end]))


def target_source(files: Mapping[str, bytes], *targets: CodeTarget) -> str:
    """The target's code, dedented; for a caller and its helper, both functions in that order."""
    texts = [_span_text(files, t) for t in targets]
    return texts[0] if len(texts) == 1 else join_parts(texts)


def _context(files: Mapping[str, bytes], targets: Sequence[CodeTarget]) -> str:
    """The modules' imports, and for a method or class attribute its class line: enough for the model to read
    names right."""
    keep: list[str] = []
    for target in targets:
        lines = _text(files, target.path).splitlines()
        keep += [line for line in lines if IMPORT_LINE.match(line)]
        qualname = names_of(target.qualname, target.kind)[0]  # an assignment of several names: all in one class
        if "." in qualname:
            cls = qualname.split(".")[-2]
            keep += [line.strip() for line in lines if re.match(rf"^\s*class\s+{re.escape(cls)}\b", line)][:1]
    own = frozenset(q.rsplit(".", 1)[-1] for t in targets for q in names_of(t.qualname, t.kind))
    called = [callee_signatures(files, t.path, _span_text(files, t), own) for t in targets]
    return "\n".join([*dict.fromkeys(keep), *filter(None, called)])


def agent_target(files: Mapping[str, bytes], *targets: CodeTarget) -> Target:
    """The agent's view: a method by its own name; an assignment by the name(s) it assigns (`Cls.a, Cls.b` →
    `a, b`); a caller and its helper by both names."""
    name = ", ".join(q.rsplit(".", 1)[-1] for t in targets for q in names_of(t.qualname, t.kind))
    return Target(name=name, source=target_source(files, *targets), context=_context(files, targets))


FOCUS_BEFORE = 8  # lines of a long test shown before its failing line: what sets up the values it checks
FOCUS_AFTER = 2


def _failing_line(failure: Failure | None, path: str, start: int, end: int) -> int | None:
    """The line of the test's own body that was running when it failed (the deepest frame inside it)."""
    if failure is None:
        return None
    lines = [fr.line for fr in failure.traceback if fr.path == path and fr.line and start <= fr.line <= end]
    if not lines and failure.file == path and failure.line and start <= failure.line <= end:
        lines = [failure.line]
    return lines[-1] if lines else None


def _body_start(lines: Sequence[str]) -> int:
    """The index of a function's first body line: past its decorators and its def line, however many lines the
    signature takes."""
    try:
        node = ast.parse(textwrap.dedent("".join(lines))).body[0]
    except (SyntaxError, ValueError, IndexError):
        return 1
    first = getattr(node, "body", [node])[0]
    return max(first.lineno - 1, 1)


def _focused(lines: Sequence[str], start: int, failing: int | None) -> list[str]:
    """A long test's header, then the lines up to its failing line and just after, the rest elided: the model
    reads the assertion that failed and what set it up, not the first lines of a test that checks many cases."""
    if failing is None:
        return list(lines)
    body = _body_start(lines)
    first, last = max(failing - FOCUS_BEFORE - start, body), min(failing + FOCUS_AFTER + 1 - start, len(lines))
    if last <= first or len(lines) <= body + (last - first) + 2:
        return list(lines)
    indent = lines[first][:len(lines[first]) - len(lines[first].lstrip())] or "    "
    kept = list(lines[:body])
    if first > body:
        kept.append(f"{indent}# ... {first - body} lines\n")
    kept += lines[first:last]
    if last < len(lines):
        kept.append(f"{indent}# ... {len(lines) - last} more lines\n")
    return kept


def _test_function(files: Mapping[str, bytes], test_id: str, failure: Failure | None = None) -> str | None:
    path, _, rest = test_id.partition("::")
    if path not in files or not rest:
        return None
    qualname = re.sub(r"\[.*\]$", "", rest).replace("::", ".")
    source = _text(files, path)
    try:
        spans = function_spans(source)
    except SyntaxError:
        return None
    lines = source.splitlines(keepends=True)
    for span in spans:
        if span.qualname == qualname:
            failing = _failing_line(failure, path, span.start, span.end)
            return textwrap.dedent("".join(_focused(lines[span.start - 1:span.end], span.start, failing)))
    return None


def tests_shown(files: Mapping[str, bytes], test_ids: Iterable[str], failures: Iterable[Failure] = ()) -> str:
    """The failing tests' code, at most MAX_TESTS_SHOWN of them; given their failures, a long test is shown
    around the line it failed at (`_focused`)."""
    by_id = {f.test_id: f for f in failures}
    shown: list[str] = []
    for test_id in sorted(test_ids):
        source = _test_function(files, test_id, by_id.get(test_id))
        if source and source not in shown:
            shown.append(source)
        if len(shown) == MAX_TESTS_SHOWN:
            break
    return "\n\n".join(s.rstrip() for s in shown)


def without_shown(feedback: str, shown: str) -> str:
    """The failure without the test's lines that the prompt already shows: pytest prints the test's body up to
    the failing line, so a long test was in the prompt twice (the model reads every token of it, slowly). The
    failing line (`>`), the error (`E`) and the rest stay."""
    known = {line.strip() for line in shown.splitlines()[:MAX_TEST_LINES] if line.strip()}
    if not known:
        return feedback
    kept = [line for line in feedback.splitlines() if line.startswith((">", "E ")) or line.strip() not in known]
    return "\n".join(kept)


def blamed_tests(target: CodeTarget, run: TestRun, failing: frozenset[str]) -> frozenset[str]:
    """The failing tests this target answers for: those whose traceback passes through it, and those that
    executed its body (coverage) unless they crashed somewhere else (a test that raised an error deeper in other
    code, not an assertion: another bug, or the environment's, that a fix here cannot make pass); a broken
    module answers for the modules that failed to collect. All of them otherwise."""
    if target.broken:
        modules = frozenset(t for t in failing if "::" not in t)
        return modules or failing
    ran: set[str] = set()
    first = target.start if target.kind == "assignment" else target.start + 1  # a def line runs at import
    if run.coverage:
        for line, tests in run.coverage.get(target.path, {}).items():
            if first <= line <= target.end:
                ran |= tests & failing
    through = {f.test_id for f in run.failures if f.test_id in failing and _passes_through(f, target)}
    elsewhere = {f.test_id for f in run.failures if f.test_id in failing and f.test_id not in through
                 and _crashed_elsewhere(f)}
    return frozenset(through | (ran - elsewhere)) or failing


def _passes_through(failure: Failure, target: CodeTarget) -> bool:
    return any(fr.path == target.path and fr.line and target.start <= fr.line <= target.end
               for fr in failure.traceback)


def _crashed_elsewhere(failure: Failure) -> bool:
    """An error (not an assertion; not a time-out, which stops wherever the loop happens to be) raised outside
    the test code: not in the test's file, nor in a helper of its top folder (tests/utils.py)."""
    if not failure.traceback or failure.error_type in (None, "AssertionError", TIMEOUT_ERROR):
        return False
    test_file, deepest = failure.test_id.partition("::")[0], failure.traceback[-1].path
    top = test_file.partition("/")[0] + "/" if "/" in test_file else None
    return deepest != test_file and not (top and deepest.startswith(top))


def _first(failures: Iterable[Failure], tests: Iterable[str]) -> Failure | None:
    wanted = set(tests)
    return next((f for f in failures if f.test_id in wanted), None)


def _where(target: CodeTarget) -> str:
    return f"`{target.qualname}` ({target.path}, lines {target.start}-{target.end})"


def explanation(target: CodeTarget, before: str, after: str, failures: Iterable[Failure],
                tests: Iterable[str], helper: CodeTarget | None = None) -> str:
    """A few sentences from facts only: where, what changed, which test showed it and how. `helper`: a two-span
    repair changed it too (`before` and `after` are then both functions)."""
    if helper is None and is_stub(before):
        n = len(after.splitlines())
        return (f"`{target.qualname}` was not defined in {target.path}, but the tests use it; the fix adds it "
                f"({n} line{'s' if n != 1 else ''}).")
    removed = [line.strip() for line in before.splitlines() if line not in after.splitlines() and line.strip()]
    added = [line.strip() for line in after.splitlines() if line not in before.splitlines() and line.strip()]
    n = changed_lines(before, after)
    lines = f"{n} line{'s' if n != 1 else ''}"
    text = f"The bug was in {_where(target)}; the fix changes {lines}" if helper is None else \
        f"The bug was split between {_where(target)} and {_where(helper)}, which it calls; the fix changes both " \
        f"({lines} in all)"
    if removed and added:
        text += f": `{removed[0]}` became `{added[0]}`" + (" (and more)" if len(removed) + len(added) > 2 else "")
    text += "."
    failure = _first(failures, tests)
    if failure is not None:
        text += f" It made `{failure.test_id}` fail"
        if failure.assertion:
            text += f" at `{failure.assertion}`"
        if failure.actual is not None and failure.expected is not None:
            text += f" (got `{failure.actual}`, expected `{failure.expected}`)"
        elif failure.error_type:
            # JUnit's message names the type, qualified for a project's own (`youtube_dl.utils.ExtractorError: `)
            named = rf"^(?:[\w.]+\.)?{re.escape(failure.error_type)}: "
            message = re.sub(named, "", failure.message or "").rstrip(".")
            text += f" with {failure.error_type}" + (f": {message}" if message else "")
        text += "."
    reasons = target.reasons + (helper.reasons if helper else ())
    if reasons:
        text += f" Located by: {', '.join(reasons)}."
    return text

