"""`fixbot demo`: proof that set-up worked — a small test suite run in the sandbox, one test red.
(The agent's issue turns the main job into a real repair; until then this shows the sandbox at work.)"""
from __future__ import annotations

import argparse
import sys

from sandbox import open_sandbox

CODE = '''def mean(xs):
    """Arithmetic mean of a non-empty list."""
    return sum(xs) / (len(xs) + 1)
'''
TESTS = '''from stats import mean

def test_single():
    assert mean([4]) == 4

def test_pair():
    assert mean([1, 2]) == 1.5
'''


def cmd_demo(args: argparse.Namespace) -> int:
    print("running a buggy module's tests in the Docker sandbox (network off, non-root, read-only root)...")
    with open_sandbox("docker") as sb:
        result = sb.run({"stats.py": CODE, "test_stats.py": TESTS},
                        ["python3", "-m", "pytest", "-q", "-p", "no:cacheprovider"], timeout=60)
    sys.stdout.write(result.stdout)
    print(f"sandbox: exit {result.exit_code} in {result.duration_s:.2f}s — the red tests above are what fixbot repairs")
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("demo", help="run a small failing test suite in the sandbox (set-up check)")
    parser.set_defaults(handler=cmd_demo)
