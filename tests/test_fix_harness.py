"""bot.fix.repair.harness in the real Docker sandbox: a candidate must pass the failing tests and keep the guards (tests
that passed before and ran the target) passing; with many guards, only the candidates that pass the failing
tests run them."""
from __future__ import annotations

import pytest

from bot.fix.repair.harness import GUARDS_APART, RepoHarness
from bot.fix.types import CodeTarget

pytestmark = pytest.mark.timeout(300)

SCALE = "def scale(x, k=2):\n    return x * k if x >= 0 else x\n"
FAILING = "tests/test_scale.py::test_negative"


def _repo(guards: int) -> tuple[dict[str, bytes], frozenset[str]]:
    tests = "from scale import scale\n\n\ndef test_negative():\n    assert scale(-1) == -2\n" + "".join(
        f"\n\ndef test_{i}():\n    assert scale({i}) == {2 * i}\n" for i in range(guards))
    files = {"scale.py": SCALE.encode(), "tests/test_scale.py": tests.encode()}
    return files, frozenset(f"tests/test_scale.py::test_{i}" for i in range(guards))


@pytest.mark.parametrize("guards", [3, GUARDS_APART + 5])
def test_a_candidate_passes_the_failing_test_and_keeps_the_guards(docker_sandbox, guards):
    files, guard_ids = _repo(guards)
    harness = RepoHarness(docker_sandbox, files, (CodeTarget("scale.py", "scale", 1, 2, 1.0),),
                          frozenset({FAILING}), guards=guard_ids, test_timeout_s=5)
    unchanged, breaks, fixed = harness.check_many([
        "def scale(x, k=2):\n    return x\n",
        "def scale(x, k=2):\n    return -2 if x < 0 else 0\n",
        "def scale(x, k=2):\n    return x * k\n"])
    assert not unchanged.passed and "assert" in unchanged.feedback
    assert not breaks.passed and f"this change breaks {guards - 1} test(s) that passed before" in breaks.feedback
    assert fixed.passed, fixed.feedback
    ran = sorted(len(run.passed | run.failed) for run in harness.runs)
    if guards > GUARDS_APART:  # the two candidates that pass the failing test run the guards, the other does not
        assert ran == [1, 1, 1, guards + 1, guards + 1], ran
    else:
        assert ran == [guards + 1] * 3, ran
