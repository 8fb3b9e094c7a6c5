"""The minimizer puts back every hunk of a passing fix that the tests do not need, and only those."""
from __future__ import annotations

from bot.agent.choose.minimize import minimize
from bot.agent.source.code import changed_lines
from bot.agent.types import TestOutcome

ORIGINAL = '''def grade(score):
    """A from 90, B from 80, else C."""
    if score > 90:
        return "A"
    if score >= 80:
        return "B"
    return "C"
'''
REWRITTEN = '''def grade(score):
    """A from 90, B from 80, else C."""
    if score >= 90:
        return "A"
    elif score >= 80:
        return "B"
    else:
        return "C"
'''


class ExecHarness:
    """Runs the function in process against expected values (the unit-test stand-in for the sandbox)."""

    def __init__(self, cases):
        self.cases = cases
        self.batches = []

    def check_many(self, sources):
        self.batches.append(len(sources))
        return [self.check(s) for s in sources]

    def check(self, source):
        scope = {}
        exec(source, scope)
        ok = all(scope["grade"](x) == want for x, want in self.cases)
        return TestOutcome(ok, "" if ok else "wrong")


def test_only_the_needed_hunk_stays():
    harness = ExecHarness([(90, "A"), (85, "B"), (10, "C")])
    small = minimize(ORIGINAL, REWRITTEN, harness)
    assert changed_lines(ORIGINAL, small) == 1
    assert "if score >= 90:" in small and "elif" not in small and "else:" not in small
    assert all(n >= 1 for n in harness.batches)


def test_a_fix_that_needs_every_hunk_is_kept():
    fixed = ORIGINAL.replace("score > 90", "score >= 90").replace('return "C"', 'return "F"')
    harness = ExecHarness([(90, "A"), (10, "F")])
    assert minimize(ORIGINAL, fixed, harness) == fixed

