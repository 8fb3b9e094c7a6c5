"""SEARCH/REPLACE answers (bot/agent/source/edit_blocks.py): parsed, applied where they name one place, and
explained back when they do not; and the reflect design asking for them on a long target."""
from __future__ import annotations

from bot.agent import AgentContext, Briefing, Budgets, RepairOptions, Target, repair
from bot.agent.source.edit_blocks import apply_blocks, parse_edits
from bot.llm import ScriptedLLM

from .test_agent_graph import AssertHarness

CODE = '''def scale(values, factor):
    """Each value times factor, and their total."""
    out = []
    for v in values:
        out.append(v + factor)
    total = 0
    for v in out:
        total += v
    return out, total
'''


def block(search: str, replace: str) -> str:
    return f"<<<<<<< SEARCH\n{search}\n=======\n{replace}\n>>>>>>> REPLACE\n"


def test_one_block_changes_only_its_lines():
    got = apply_blocks(block("        out.append(v + factor)", "        out.append(v * factor)"), [CODE])
    assert got is not None and got.problem is None
    assert got.code == CODE.replace("v + factor", "v * factor")


def test_a_block_off_in_indentation_still_applies_at_the_codes_own_indentation():
    answer = "```\n" + block("out.append(v + factor)", "out.append(v * factor)\nout.sort()") + "```"
    got = apply_blocks(answer, [CODE])
    assert got is not None and got.code == CODE.replace("        out.append(v + factor)\n",
                                                        "        out.append(v * factor)\n        out.sort()\n")


def test_two_blocks_change_two_places():
    answer = block("    out = []", "    out = [0]") + "\n" + block("        total += v", "        total -= v")
    got = apply_blocks(answer, [CODE])
    assert got is not None and got.code == CODE.replace("out = []", "out = [0]").replace("+= v", "-= v")


def test_a_block_that_matches_nothing_names_the_missing_line_and_the_nearest_lines():
    got = apply_blocks(block("        out.append(v - factor)", "        out.append(v * factor)"), [CODE])
    assert got is not None and got.code is None and got.problem == "edit"
    assert "no line `out.append(v - factor)`" in got.detail
    assert "out.append(v + factor)" in got.detail  # the nearest line, to copy


def test_a_block_that_matches_two_places_asks_for_a_line_around_it():
    got = apply_blocks(block("    for v in values:\n", "    for v in sorted(values):") + block(
        "    for v in out:", "    for v in out:"), [CODE])
    assert got is not None and got.code is not None  # each names one place
    got = apply_blocks(block("    for v in", "    for w in"), ["    for v in a:\n    for v in b:\n"])
    assert got is not None and got.problem == "edit"  # a prefix is not a line: no match
    twice = apply_blocks(block("x = 1", "x = 2"), ["x = 1\ny = 0\nx = 1\n"])
    assert twice is not None and twice.problem == "edit" and "matches 2 places" in twice.detail


def test_the_latest_attempt_is_edited_before_the_original():
    attempt = CODE.replace("out = []", "out = [0]")
    got = apply_blocks(block("    out = [0]", "    out = []\n    factor = factor or 1"), [attempt, CODE])
    assert got is not None and got.code == CODE.replace("    out = []\n", "    out = []\n    factor = factor or 1\n")
    both = apply_blocks(block("        total += v", "        total += 2 * v"), [attempt, CODE])
    assert both is not None and "out = [0]" in (both.code or "")  # applies to the attempt too


def test_an_unfinished_block_and_an_answer_without_blocks():
    got = apply_blocks("<<<<<<< SEARCH\n    out = []\n", [CODE])
    assert got is not None and got.problem == "edit" and "=======" in got.detail
    assert apply_blocks("```python\ndef scale(values, factor):\n    return []\n```", [CODE]) is None
    cut = parse_edits("<<<<<<< SEARCH\n    out = []\n=======\n    out = [0]\n")  # the answer's tokens ran out
    assert [(e.search, e.replace) for e in cut] == [(("    out = []",), ("    out = [0]",))]


LONG = "def add(a, b):\n    \"\"\"Return the sum of a and b.\"\"\"\n" + "".join(
    f"    x{i} = {i}\n" for i in range(45)) + "    return a - b\n"


def test_a_long_function_is_asked_for_blocks_and_a_bad_block_is_explained_back():
    bad = block("    return a - c", "    return a + b")
    good = block("    return a - b", "    return a + b")
    llm = ScriptedLLM([bad, good])
    ctx = AgentContext(llm=llm, harness=AssertHarness(), target=Target("add", LONG),
                       briefing=Briefing("assert add(2, 3) == 5\nE  assert -1 == 5"),
                       options=RepairOptions(budgets=Budgets(iterations=3)))
    result = repair(ctx)
    assert result.status == "fixed" and result.final_code == LONG.replace("a - b", "a + b")
    assert [(a.node, a.outcome) for a in result.attempts] == [("draft", "unapplied"), ("syntax", "passed")]
    assert "SEARCH/REPLACE" in llm.calls[0][0].content
    assert "no line `return a - c`" in llm.calls[1][-1].content and "return a - b" in llm.calls[1][-1].content
    assert "SEARCH/REPLACE" not in llm.calls[1][0].content  # after blocks that did not apply: the whole code


def test_search_lines_unlike_any_of_the_code_are_not_answered_with_random_nearest_lines():
    got = apply_blocks(block("        if count > limit:", "        if count >= limit:"), [CODE])
    assert got is not None and got.problem == "edit"
    assert "SEARCH must copy lines of the code you were given" in got.detail and "nearest" not in got.detail


def test_a_short_function_is_asked_for_whole_unless_told_otherwise():
    short = "def add(a, b):\n    return a - b\n"
    for edits, asked in (("auto", False), ("blocks", True)):
        llm = ScriptedLLM([block("    return a - b", "    return a + b")])
        ctx = AgentContext(llm=llm, harness=AssertHarness(), target=Target("add", short),
                           briefing=Briefing("assert add(2, 3) == 5"),
                           options=RepairOptions(budgets=Budgets(iterations=1), edits=edits))
        assert repair(ctx).status == "fixed"  # a block is read either way
        assert ("SEARCH/REPLACE" in llm.calls[0][0].content) is asked


def test_a_revision_in_blocks_names_the_attempts_change_in_words_not_as_a_diff():
    wrong, good = block("    return a - b", "    return a * b"), block("    return a * b", "    return a + b")
    llm = ScriptedLLM([wrong, good])
    ctx = AgentContext(llm=llm, harness=AssertHarness(), target=Target("add", LONG),
                       briefing=Briefing("assert add(2, 3) == 5\nE  assert -1 == 5"),
                       options=RepairOptions(budgets=Budgets(iterations=3)))
    result = repair(ctx)
    assert [(a.node, a.outcome) for a in result.attempts] == [("draft", "failed"), ("reflect", "passed")]
    asked = llm.calls[1][-1].content
    assert "The last attempt changed `return a - b` -> `return a * b` and still fails" in asked
    assert "```diff" not in asked and result.final_code == LONG.replace("a - b", "a + b")  # built on the attempt
