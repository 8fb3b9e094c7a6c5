"""`fixbot demo`: the main job with the embedded defaults (Docker sandbox + bundled model) on a small buggy
module: red tests, the agent's repair, the minimal diff, green tests. (`fixbot fix` extends this to whole
repositories.)"""
from __future__ import annotations

import argparse
import sys

from ..agent import AgentContext, Budgets, Failure, Target, repair
from ..agent.code import function_source, splice, unified_diff
from ..harness import PytestHarness
from .options import add_model_args, add_sandbox_args, opened_model, open_sandbox_from

MODULE = '''"""Small statistics helpers."""


def mean(xs):
    """Arithmetic mean of a non-empty list of numbers.

    >>> mean([1, 2, 3])
    2.0
    """
    total = 0
    for x in xs:
        total += x
    return total / (len(xs) + 1)
'''
TESTS = '''from stats import mean


def test_single():
    assert mean([4]) == 4


def test_pair():
    assert mean([1, 2]) == 1.5
'''


def _say(message: str) -> None:
    print(message, flush=True)


def cmd_demo(args: argparse.Namespace) -> int:
    _say("fixbot demo: stats.py has a bug; its tests run in the Docker sandbox (no network, non-root)\n")
    with open_sandbox_from(args, pool_size=1) as sandbox:
        harness = PytestHarness(sandbox, "stats.py", MODULE, "mean", {"test_stats.py": TESTS}, timeout_s=30)
        source = function_source(MODULE, "mean")
        before = harness.check(source)
        _say(f"red: the tests fail\n{before.feedback}\n")
        _say(f"repairing `mean` with {args.model} (up to {args.iterations} attempts)...")
        with opened_model(args) as llm:
            result = repair(AgentContext(llm=llm, harness=harness, target=Target("mean", source),
                                         failure=Failure(before.feedback, tests=TESTS),
                                         budgets=Budgets(iterations=args.iterations)))
    for a in result.attempts:
        _say(f"  attempt {a.iteration} ({a.node}): {a.outcome} · {a.completion_tokens} tokens · {a.latency_s:.1f} s")
    if result.final_code is None:
        _say(f"\nnot fixed ({result.stop_reason} budget spent)")
        return 1
    fixed = splice(MODULE, "mean", result.final_code)
    diff = unified_diff(MODULE, fixed, "stats.py")
    _say(f"\ngreen: the tests pass with this fix ({result.changed_lines} line changed, {result.wall_s:.0f} s):\n")
    sys.stdout.write(diff)
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("demo", help="repair a small buggy module end to end (the set-up check)",
                            description="Runs a small buggy module's tests in the sandbox, repairs the function "
                                        "with the agent, and prints the minimal diff.")
    add_model_args(parser)
    add_sandbox_args(parser)
    parser.add_argument("--iterations", type=int, default=5, metavar="K", help="model calls at most (default 5)")
    parser.set_defaults(handler=cmd_demo)
