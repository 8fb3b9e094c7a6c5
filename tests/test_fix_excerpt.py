"""A long function's suspicious part shown to the model as a function of its own (bot/fix/locate/excerpt.py): which
lines are chosen, that putting the part back changes nothing else, and a repository whose 60-line function is
repaired through its excerpt in the Docker sandbox."""
from __future__ import annotations

import re

import pytest

from bot.fix.locate.excerpt import MAX_EXCERPT_LINES, answer_tokens, excerpt, line_scores, named_lines
from bot.fix.verify.report import to_markdown
from bot.llm.types import Completion

from .test_fix import fix_example
from .test_fix_realrepo import make_repo

PADDING = "".join(f'    stats["over_{i}"] = sum(1 for o in orders if o["amount"] > {i})\n' for i in range(40))
REPORT = ('def report(orders):\n'
          '    """Totals by kind, and how many orders are over each amount."""\n'
          '    stats = {}\n'
          + PADDING +
          '    totals = {"book": 0, "food": 0}\n'
          '    for order in orders:\n'
          '        totals[order["kind"]] += order["amount"]\n'
          '    text = """a note\n'
          'at the margin"""\n'
          '    stats["note"] = text\n'
          '    return {"totals": totals, "stats": stats}\n')
BUGGY_LINE = '        totals[order["kind"]] += order["amount"]\n'
FIXED_LINE = '        totals[order["kind"]] = totals.get(order["kind"], 0) + order["amount"]\n'
LOOP = REPORT.splitlines().index('    for order in orders:') + 1  # 1-based
REPORT_TESTS = '''from shop import report


def test_known_kinds():
    assert report([{"kind": "book", "amount": 2}])["totals"] == {"book": 2, "food": 0}


def test_a_new_kind_is_counted():
    assert report([{"kind": "toy", "amount": 3}])["totals"] == {"book": 0, "food": 0, "toy": 3}


def test_stats():
    assert report([{"kind": "food", "amount": 5}])["stats"]["over_4"] == 1
'''


def test_a_short_function_has_no_excerpt():
    assert excerpt("def f(x):\n    return x + 1\n", {2: 1.0}) is None


def test_no_evidence_inside_the_function_no_excerpt():
    assert excerpt(REPORT, {}) is None


def test_the_excerpt_holds_the_traceback_line_and_goes_back_byte_for_byte():
    part = excerpt(REPORT, {LOOP + 1: 1.0})
    assert part is not None
    lines = part.source.splitlines()
    assert lines[0] == "def report(orders):" and lines[1].startswith('    """Totals')  # def line and docstring
    assert "    for order in orders:" in lines and BUGGY_LINE.rstrip("\n") in lines  # the loop, with its body
    assert len(lines) - 2 <= MAX_EXCERPT_LINES
    assert part.expand(part.source) == REPORT
    fixed = part.source.replace(BUGGY_LINE, FIXED_LINE)
    assert fixed != part.source
    assert part.expand(fixed) == REPORT.replace(BUGGY_LINE, FIXED_LINE)


def test_the_model_reads_what_binds_the_names_of_the_excerpt_then_the_lines_just_above_it():
    """`stats = {}` is 40 lines above the loop: shown, by relevance, before the lines just above; a name a
    comprehension binds for itself (`o`) binds nothing the excerpt reads."""
    part = excerpt(REPORT, {LOOP + 1: 1.0})
    assert part is not None
    above = part.preamble.splitlines()
    assert above[:2] == ["    stats = {}", "    # ..."]
    assert above[2:] == REPORT.splitlines()[part.first - 12:part.first]  # PREAMBLE_LINES just above


def test_a_helper_defined_under_a_condition_far_up_is_shown_beside_the_excerpt_that_calls_it():
    helper = ("    if orders:\n"
              "        def kind_of(order):\n"
              "            return order.get(\"kind\", \"book\")\n"
              "    else:\n"
              "        kind_of = None\n")
    source = REPORT.replace('    stats = {}\n', '    stats = {}\n' + helper).replace(
        'totals[order["kind"]]', 'totals[kind_of(order)]')
    loop = source.splitlines().index('    for order in orders:') + 1
    part = excerpt(source, {loop + 1: 1.0})
    assert part is not None
    assert part.preamble.splitlines()[:7] == ["    stats = {}", *helper.splitlines(), "    # ..."]


def test_an_answer_without_the_docstring_or_with_other_indentation_goes_back_in_place():
    part = excerpt(REPORT, {LOOP + 1: 1.0})
    assert part is not None
    body = part.source.split('"""\n', 1)[1].replace(BUGGY_LINE, FIXED_LINE)
    answer = "def report(orders):\n" + re.sub(r"(?m)^    ", "  ", body)  # two-space indents, no docstring
    assert part.expand(answer) == REPORT.replace(BUGGY_LINE, FIXED_LINE)
    assert part.expand("not python at all (") == "not python at all ("  # the tests will say why
    above = "".join(REPORT.splitlines(True)[part.first - 2:part.first])  # two lines above the excerpt, repeated
    assert part.expand("def report(orders):\n" + above + body) == REPORT.replace(BUGGY_LINE, FIXED_LINE)
    repeated = "def report(orders):\n" + part.preamble + body  # the context repeated, `# ...` and all
    assert "    # ...\n" in part.preamble
    assert part.expand(repeated) == REPORT.replace(BUGGY_LINE, FIXED_LINE)
    definitions = part.preamble.split("    # ...\n")[0]
    assert part.expand("def report(orders):\n" + definitions + "    # ...\n" + body) == \
        REPORT.replace(BUGGY_LINE, FIXED_LINE)
    again = part.expand("def report(orders):\n" + definitions + body)  # no gap marker: `stats = {}` may be the fix
    assert again.count("    stats = {}\n") == 2
    whole_fixed = REPORT.replace(BUGGY_LINE, FIXED_LINE)
    assert part.expand(whole_fixed) == whole_fixed  # an answer that rewrote the whole function is taken whole


def test_an_answer_that_repeats_a_preamble_longer_than_the_rest_is_still_an_excerpt():
    """Most lines outside a 24-line excerpt of a 43-line function are shown in the preamble: an answer that
    repeats them is not the whole function (the lines after the excerpt would be lost)."""
    source = ('def report(orders):\n    """Totals."""\n    stats = {}\n'
              + "".join(f"    a{i} = len(orders) + {i}\n" for i in range(16))
              + "".join(f'    stats["k{i}"] = a{i % 16} * {i}\n' for i in range(22))
              + '    stats["n"] = len(orders)\n    return stats\n')
    hot = source.splitlines().index('    stats["k5"] = a5 * 5') + 1
    part = excerpt(source, {line: 1.0 for line in range(hot, hot + 16)})
    assert part is not None and len(source.splitlines()) - part.stop == 3  # 16 lines shown, 3 after
    body = part.source.split('"""\n', 1)[1].replace("a5 * 5", "a5 * 6")
    assert part.expand("def report(orders):\n" + part.preamble + body) == source.replace("a5 * 5", "a5 * 6")


def test_a_string_whose_lines_leave_the_indentation_stays_as_it_is():
    text_line = REPORT.splitlines().index('    text = """a note') + 1
    part = excerpt(REPORT, {text_line: 1.0})
    assert part is not None
    assert "at the margin" in part.source
    assert part.expand(part.source) == REPORT


def test_scores_favour_lines_only_failing_tests_ran_and_lines_the_failure_names():
    covered = {11: frozenset({"t::fail", "t::pass"}), 12: frozenset({"t::fail"}), 13: frozenset({"t::pass"})}
    scores = line_scores(covered, frozenset({"t::fail"}), frozenset({"t::pass"}), offset=10, hot={5}, named={4})
    assert scores == {1: pytest.approx(2 ** -0.5), 2: 1.0, 4: 0.5, 5: 3.0}  # line 3: only the passing test


def test_named_lines_use_the_assertions_words_not_the_functions_own_lines():
    feedback = ('>       assert report([{"kind": "toy", "amount": 3}])["totals"] == {"toy": 3}\n'
                'E       KeyError: \'toy\'\n'
                '>       totals[order["kind"]] += order["amount"]\n')
    named = named_lines(REPORT, feedback)
    assert LOOP + 1 in named  # "totals", "kind", "amount"
    assert REPORT.splitlines().index('    text = """a note') + 1 not in named
    assert LOOP not in named  # `for order in orders:`: "toy" and "KeyError" (a builtin) name nothing here


def test_the_answer_cap_fits_the_code_to_rewrite():
    assert answer_tokens("def f():\n    pass\n", 400) == 400
    assert answer_tokens(REPORT, 400) > len(REPORT) // 4


class ExcerptLLM:
    """Scripted: fixes the buggy line in whatever code the prompt shows, and remembers how long that code was."""

    name = "excerpt-fixer"

    def __init__(self) -> None:
        self.shown: list[str] = []

    def complete(self, messages, *, temperature=0.0, max_tokens=512, seed=None) -> Completion:
        code = re.search(r"Its code:\n```python\n(.*?)```", messages[-1].content, re.S).group(1)
        self.shown.append(code)
        buggy, fixed = BUGGY_LINE.strip(), FIXED_LINE.strip()
        return Completion(text=f"```python\n{code.replace(buggy, fixed)}```", prompt_tokens=10,
                          completion_tokens=10, latency_s=0.0, model=self.name)


def test_a_long_function_is_repaired_through_its_excerpt(tmp_path, docker_client, sandbox_image):
    root = make_repo(tmp_path / "shop", {"shop.py": REPORT, "tests/test_shop.py": REPORT_TESTS})
    llm = ExcerptLLM()
    result, _ = fix_example(docker_client, sandbox_image, root, llm)
    assert result.status == "fixed", result.message
    assert llm.shown and all(len(code.splitlines()) <= MAX_EXCERPT_LINES + 1 for code in llm.shown)
    assert 'stats["over_0"]' not in llm.shown[0]  # the top of the function, far from the failure, is not shown
    removed = [line for line in result.diff.splitlines() if line.startswith("-") and not line.startswith("---")]
    added = [line for line in result.diff.splitlines() if line.startswith("+") and not line.startswith("+++")]
    assert removed == ["-" + BUGGY_LINE.rstrip("\n")] and added == ["+" + FIXED_LINE.rstrip("\n")]
    answered = [a for r in result.repairs for a in r.attempts if a.code]
    assert answered and all(a.code.startswith("def report(orders):") and 'stats["over_0"]' in a.code
                            for a in answered)  # recorded as tested: the answer put back into the whole function
    row = next(line for line in to_markdown(result).splitlines()
               if line.startswith("| `shop.py::report` | 1 |") and "| passed |" in line)
    assert "totals.get(" in row and "over_" not in row and row.count("; ") == 1, row  # one line out, one in
