"""What the model reads. Short, concrete, and ordered so the per-task part is a stable prefix that the
backend's prompt cache reuses across iterations; only the latest attempt and its failure change."""
from __future__ import annotations

import difflib
import textwrap
from collections.abc import Sequence

from bot.agent.source.code import split_docstring, target_kind, unwritten
from bot.agent.source.parts import function_names, function_parts
from bot.agent.state import Seen
from bot.agent.steps.unused import unused_note
from bot.agent.types import Attempt, Briefing, Target
from bot.llm.types import Message

SYSTEM = """You repair one buggy Python function so that its tests pass.
The bug is small: usually one line, often a wrong operator, constant, variable, call or condition.
Reply with the whole corrected function in one ```python code block and nothing else:
no explanation, no docstring, no tests, no usage example.
Keep the function's name and parameters. Change as little as possible."""

# An assignment target (a constant, a table of lambdas, a class attribute) is not a function: saying so would
# have the model write a `def`.
ASSIGNMENT_SYSTEM = """You repair one buggy Python assignment statement (a constant, a table, a class attribute) so
that its tests pass. The bug is small: usually one value, operator, constant or condition inside it.
Reply with the whole corrected statement in one ```python code block and nothing else: no explanation, no tests.
Assign exactly the same names. Change as little as possible."""

# A caller and its helper, repaired together (bot/agent/source/parts.py): two answers, each a whole function, are
# what a small model writes reliably; one block per function is what it is asked for.
FUNCTIONS_SYSTEM = """You repair a bug that is split between two Python functions: a function and the helper it
calls. Both need a small change for the tests to pass: usually one line in each, often a wrong operator, constant,
argument, call or condition.
Reply with both corrected functions, each whole in its own ```python code block, and nothing else:
no explanation, no docstring, no tests, no usage example.
Keep each function's name and parameters. Change as little as possible."""

# A function not written yet (a stub that raises NotImplementedError, repair/missing.py): there is no bug to find,
# and its parameters are whatever the tests call it with.
WRITE_SYSTEM = """You write one Python function so that its tests pass.
Reply with the whole function in one ```python code block and nothing else: no explanation, no tests.
Keep the function's name; give it the parameters the tests call it with.
Use only the standard library; import what you need inside the function."""

# A long function (bot/agent/options.py, BLOCKS_FROM) does not fit one answer written out whole: the model writes only
# the lines it changes, as SEARCH/REPLACE blocks (bot/agent/source/edit_blocks.py), for every kind of target.
BLOCKS_SYSTEM = """You repair buggy Python code so that its tests pass.
The bug is small: usually one line, often a wrong operator, constant, variable, argument, call or condition;
sometimes a missing statement or branch.
Reply only with SEARCH/REPLACE blocks, one for each place you change, in this form:
<<<<<<< SEARCH
(the lines of the code to change, copied exactly as they read there, with their indentation)
=======
(what those lines become)
>>>>>>> REPLACE
Copy into SEARCH only lines that are in the code you are given; add the line before or after when they could be
mistaken for others. No explanation, no tests. Keep names and parameters. Change as little as possible."""

MAX_TEST_LINES = 40

# Optional (--few-shot): common bug patterns with their fixes, appended to every design's system prompt.
FEW_SHOT = """Common small bugs and their fixes, for example:
- wrong comparison: `if x > 0:` -> `if x >= 0:`
- off by one: `for i in range(1, n):` -> `for i in range(1, n + 1):`
- wrong operator: `total -= x` -> `total += x`
- wrong variable: `return a` -> `return b`
- missing call: `return x - y` -> `return abs(x - y)`
- extra condition: `if a and b and c:` -> `if a and b:`
- wrong constant: `return n % 2 == 1` -> `return n % 2 == 0`"""


def fence(code: str) -> str:
    return f"```python\n{code.rstrip()}\n```"


def _clip(text: str, max_lines: int) -> str:
    lines = text.strip("\n").splitlines()
    more = [f"# ... {len(lines) - max_lines} more lines"] if len(lines) > max_lines else []
    return "\n".join(lines[:max_lines] + more)


def _system(target: Target, blocks: bool = False) -> str:
    if blocks:
        return BLOCKS_SYSTEM
    if unwritten(target.source):
        return WRITE_SYSTEM
    kind = target_kind(target.source)
    return SYSTEM if kind == "function" else FUNCTIONS_SYSTEM if kind == "functions" else ASSIGNMENT_SYSTEM


def _names(names: Sequence[str]) -> str:
    quoted = [f"`{n}`" for n in names]
    return ", ".join(quoted[:-1]) + " and " + quoted[-1] if len(quoted) > 1 else "".join(quoted)


def _what(target: Target) -> str:
    """How the prompts name the target: "function `f`", "assignment to `TABLE`", "functions `f` and `g`"."""
    kind = target_kind(target.source)
    if kind == "functions":
        return f"functions {_names(function_names(target.source))}"
    return f"{'function' if kind == 'function' else 'assignment to'} `{target.name}`"


def _reply(target: Target, blocks: bool = False) -> str:
    if blocks:
        return f"Reply with the SEARCH/REPLACE blocks that fix the {_what(target)}."
    each = ", each whole in its own ```python block" if target_kind(target.source) == "functions" else ""
    return f"Reply with the corrected {_what(target)}{each}."


def _described(target: Target, numbered: str) -> list[str]:
    """The task's first lines: what has the bug, what it should do (the docstring, apart), its code."""
    functions = function_parts(target.source)
    if unwritten(target.source):
        # the stub's `*args, **kwargs` is not shown: a small model keeps the parameters it is shown
        return [f"The function `{target.name}` is not written yet. Write it so that its tests pass, with the "
                "parameters the tests call it with."]
    if not functions:
        code, doc = split_docstring(target.source)
        parts = [f"The {_what(target)} has a bug."]
        if doc:
            parts += ["What it should do:", textwrap.indent(doc.strip(), "    ")]
        return parts + (["Its code, with line numbers:", f"```\n{numbered}\n```"] if numbered
                        else ["Its code:", fence(code)])
    caller, *helpers = [name for name, _ in functions]
    parts = [f"The function `{caller}` and the helper {_names(helpers)} it calls each have a bug: the tests pass only "
             f"when both are fixed. Check how `{caller}` calls {_names(helpers)} (which arguments, in which order) as "
             "well as what the helper does with them."]
    for name, text in functions:
        code, doc = split_docstring(text)
        parts += [f"What `{name}` should do:", textwrap.indent(doc.strip(), "    ")] if doc else []
        parts += [] if numbered else [f"The code of `{name}`:", fence(code)]
    return parts + (["Their code, with line numbers:", f"```\n{numbered}\n```"] if numbered else [])


def task(target: Target, briefing: Briefing, numbered: str = "") -> str:
    """The task; `numbered` shows the code with line numbers instead (for line edits)."""
    parts = _described(target, numbered)
    note = unused_note(target.source)  # "" for a stub to write: it assigns nothing
    parts += [note] if note else []
    if any(line.strip() and not line.startswith(("import ", "from ")) for line in target.context.splitlines()):
        parts += ["It lives next to this code:", fence(target.context)]
    if briefing.tests.strip():
        parts += ["Its tests:", fence(_clip(briefing.tests, MAX_TEST_LINES))]
    return "\n".join(parts)


def _diff_lines(before: str, after: str) -> list[str]:
    """The removed (-) and added (+) lines between two versions, without the file headers."""
    return [line for line in difflib.unified_diff(before.splitlines(), after.splitlines(), lineterm="", n=0)
            if line[:1] in "+-" and not line.startswith(("+++", "---"))]


CHANGE_LINES = 4  # diff lines in an attempt's one-line summary
CHANGE_REGION_LINES = 2  # of those, removed lines and added lines of one changed region, each


def change(before: str, after: str) -> str:
    """One attempt in a line or two: what it changed. Each changed region shows its first removed lines, then its
    first added ones, so a change that rewrote a long block is read by what it put instead, not by what it
    took away alone."""
    old, new = before.splitlines(), after.splitlines()
    shown: list[str] = []
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(None, old, new, autojunk=False).get_opcodes():
        if op != "equal":
            shown += [f"-{line}" for line in old[i1:i2][:CHANGE_REGION_LINES]]
            shown += [f"+{line}" for line in new[j1:j2][:CHANGE_REGION_LINES]]
    return "; ".join(_short(line) for line in shown[:CHANGE_LINES]) or "no change"


def _short(line: str) -> str:
    return line.strip() if len(line) < 90 else line[:87] + "..."


def tried_lines(target: Target, attempts: list[Attempt]) -> list[str]:
    """Each tested attempt that failed, in a line: what it changed, and how it failed."""
    return [f"- {change(target.source, a.code or '')}  => {how_failed(a)}"
            for a in attempts if a.code and a.outcome in ("failed", "timeout")]


def how_failed(attempt: Attempt) -> str:
    """How an attempt failed, in a line: pytest's first `E` line (`assert None == (0, 1)`), not the location line
    above it (`test_solution.py:5: in check`, which the model copied into its next code)."""
    lines = attempt.feedback.splitlines()
    said = next((line[1:].strip() for line in lines if line.startswith("E ") and line[1:].strip()), None)
    return said or (lines[0] if lines else attempt.outcome)


def history(target: Target, attempts: list[Attempt], skip_last: bool = True) -> str:
    """Earlier failing attempts, a line each; the latest is skipped when the prompt shows it in full."""
    lines = tried_lines(target, attempts)[:-1 if skip_last else None]
    if not lines:
        return ""
    return "Earlier attempts that also failed (do not repeat them):\n" + "\n".join(lines[-4:])


def _edit(before: str, after: str) -> str:
    """A one-line change for people and models: `old line` -> `new line`."""
    return _in_words(_diff_lines(before, after))


def _in_words(diff: list[str]) -> str:
    """A change's removed and added lines (`_diff_lines`) as `old` -> `new`."""
    old = "; ".join(line[1:].strip() for line in diff if line.startswith("-"))
    new = "; ".join(line[1:].strip() for line in diff if line.startswith("+"))
    return f"`{old}` -> `{new}`" if new else f"delete `{old}`"


def hints_text(target: Target, hints: list[str]) -> str:
    if not hints:
        return ""
    lines = [f"- {_edit(target.source, h)}" for h in hints]
    return ("\nEach of these small changes makes the visible tests pass, but they do different things; the tests "
            "cannot tell which is right. Pick the one that does what the docstring says, or find the real fix:\n"
            + "\n".join(lines) + "\n")


ORIGINAL = "the original (buggy) function"  # how attempts and searches name the code the agent started from


def seen_label(seen: Seen) -> str:
    """Code already tried, as the model and the records name it: the original function, "attempt 3"."""
    return {"original": ORIGINAL, "attempt": f"attempt {seen.iteration}",
            "sample": "another answer to the same prompt"}[seen.kind]


def draft(target: Target, briefing: Briefing, hints: list[str] = (),  # type: ignore[assignment]
          blocks: bool = False) -> list[Message]:
    return [Message("system", _system(target, blocks)),
            Message("user", f"{task(target, briefing)}\n\nThe tests fail:\n{briefing.summary.strip()}\n"
                            f"{hints_text(target, list(hints))}\n{_reply(target, blocks)}")]


def _follow_up(target: Target, briefing: Briefing, situation: str, attempts: list[Attempt], ask: str,
               hints: list[str] = (), blocks: bool = False) -> list[Message]:  # type: ignore[assignment]
    """A revision request: the task (a stable prefix), what just happened, earlier attempts, what to do."""
    tried = history(target, attempts)
    return [Message("system", _system(target, blocks)),
            Message("user", f"{task(target, briefing)}\n\n{situation.strip()}\n" + (f"\n{tried}\n" if tried else "")
                    + hints_text(target, list(hints)) + f"\n{ask} {_reply(target, blocks)}")]


SHOWN_CHANGE_LINES = 12  # of a latest attempt's diff: a longer rewrite is cut, the model has the code above


def _failing(target: Target, current: str, feedback: str, blocks: bool) -> str:
    """The latest attempt and its failure, as the change it made to the code above and not as its code: shown
    whole, a failed attempt was what a small model answered again, unchanged (a repeat, which tests nothing). To a
    model that answers in blocks the change is told in words: shown as a diff, it was copied into SEARCH lines."""
    if current.strip() == target.source.strip():
        return f"The code still fails:\n{feedback.strip()}"
    diff = _diff_lines(target.source, current)
    if blocks or len(diff) <= 2:
        return f"The last attempt changed {_in_words(diff)} and still fails:\n{feedback.strip()}"
    more = [f"... {len(diff) - SHOWN_CHANGE_LINES} more changed lines"] if len(diff) > SHOWN_CHANGE_LINES else []
    shown = "\n".join(diff[:SHOWN_CHANGE_LINES] + more)
    return f"The last attempt made this change to the code above and still fails:\n```diff\n{shown}\n```\n" \
           f"{feedback.strip()}"


def reflect(target: Target, briefing: Briefing, current: str, feedback: str, attempts: list[Attempt],
            hints: list[str] = (), blocks: bool = False) -> list[Message]:  # type: ignore[assignment]
    situation = _failing(target, current, feedback, blocks)
    ask = "Find the real bugs: one in each function." if target_kind(target.source) == "functions" else \
        "Find what it gets wrong and write it again." if unwritten(target.source) else "Find the real bug."
    return _follow_up(target, briefing, situation, attempts, ask, hints, blocks)


def repeat(target: Target, briefing: Briefing, same_as: Seen | None, feedback: str,
           attempts: list[Attempt], blocks: bool = False, suspect: str | None = None) -> list[Message]:
    """Ask again after an answer that repeated code already tried; `suspect`: a line the model named as wrong
    after an unchanged answer (bot/agent/designs/suspect.py), which the request points at."""
    original = same_as is not None and same_as.kind == "original"
    if original and target_kind(target.source) == "functions":
        caller, *helpers = function_names(target.source)
        situation = f"Your answer did not change the functions: they are still the original (buggy) ones, which " \
                    f"fail:\n{feedback.strip()}"
        ask = (f"Each function has a bug. Take the failing test's input, follow it through `{caller}` into "
               f"{_names(helpers)} line by line, and in each of them change the line that produces a wrong value.")
    elif original and unwritten(target.source):
        situation = f"Your answer is still the stub, which fails:\n{feedback.strip()}"
        ask = "Write the function's body: compute from its arguments what the tests expect it to return."
    elif original:  # the commonest repeat: the model saw no bug and changed nothing
        situation = f"Your answer did not change the function: it is still {ORIGINAL}, which fails:\n{feedback.strip()}"
        ask = (f"The bug is probably in this line:\n    {suspect}\nChange that line, and only what must change with "
               "it, so that the failing test passes.") if suspect else \
            ("The function has a bug. Take the failing test's input, follow it through the code line by line, "
             "find the line that produces the wrong value, and change that line.")
    else:
        earlier = seen_label(same_as) if same_as is not None else "an earlier attempt"
        situation = f"Your answer was the same code as {earlier}, which fails:\n{feedback.strip()}"
        ask = "That change does not fix it. Read the docstring and the failing test again and find a different bug."
    return _follow_up(target, briefing, situation, attempts, ask, blocks=blocks)


def syntax(target: Target, briefing: Briefing, problem: str, blocks: bool = False) -> list[Message]:
    if blocks:
        return [Message("system", BLOCKS_SYSTEM),
                Message("user", f"{task(target, briefing)}\n\nYour last answer could not be used: {problem.strip()}"
                                f"\n\nReply with the corrected SEARCH/REPLACE blocks.")]
    same = {"function": "in one ```python block, with the same name and parameters",
            "functions": "each in its own ```python block, with the same names and parameters",
            "assignment": "in one ```python block, assigning the same names"}[target_kind(target.source)]
    return [Message("system", _system(target)),
            Message("user", f"{task(target, briefing)}\n\nYour last answer could not be used: {problem.strip()}\n\n"
                            f"Reply with the complete corrected {_what(target)} {same}.")]


ASSERTS_SYSTEM = """You write tests for a Python function from its description.
Reply with one ```python code block of assert lines only, one assert per line."""
ASSERTS = 8


def _spec(target: Target) -> tuple[str, str]:
    """What a model writing from the description sees of the function: its `def` line and its docstring, indented."""
    code, doc = split_docstring(target.source)
    header = next((line for line in code.splitlines() if line.lstrip().startswith("def ")), code.splitlines()[0])
    return header.strip(), textwrap.indent(doc.strip(), "    ")


def asserts(target: Target, briefing: Briefing) -> list[Message]:
    """Asserts for the choice among fixes (bot/agent/choose/select.py): the function's `def` line, its docstring and the
    visible tests, never its code, whose results the model would copy bug and all."""
    header, doc = _spec(target)
    shown = f"\n\nIts examples:\n{fence(_clip(briefing.tests, MAX_TEST_LINES))}" if briefing.tests.strip() else ""
    return [Message("system", ASSERTS_SYSTEM),
            Message("user", f"The function:\n{fence(header)}\nWhat it should do:\n{doc}{shown}\n\nWrite {ASSERTS} "
                            f"more assert lines, each `assert {target.name}(...) == expected`, with new inputs, edge "
                            "cases among them; work out each expected result carefully from the description.")]


REFERENCE_SYSTEM = """You write one Python function from its description.
Reply with the whole function in one ```python code block and nothing else: no explanation, no tests."""


def reference(target: Target, briefing: Briefing) -> list[Message]:
    """The function written anew from its `def` line, docstring and visible tests (choose/references.py), never
    its code: a model shown the buggy body keeps much of it."""
    header, doc = _spec(target)
    parts = [f"Write the function `{target.name}`:", fence(header), "What it should do:", doc]
    if any(line.strip() and not line.startswith(("import ", "from ")) for line in target.context.splitlines()):
        parts = ["It lives next to this code:", fence(target.context), *parts]
    if briefing.tests.strip():
        parts += ["Its examples:", fence(_clip(briefing.tests, MAX_TEST_LINES))]
    return [Message("system", REFERENCE_SYSTEM), Message("user", "\n".join(parts))]
