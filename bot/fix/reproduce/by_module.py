"""A suite that does not finish as a whole, run again one test module at a time.

Every test has its own time limit (the probe's watchdog), so a whole suite outlasts `--suite-timeout` only when a
test hangs where the limit cannot stop it (a C call, a blocked signal) or there are simply very many slow tests.
Either way the answer is a failure to read, never an error: each test module runs in a pytest process of its own
(two at a time, the sandbox's pool), bounded by MODULE_TIMEOUT_S, and the runs are merged into one. A module that
still does not finish is one failing test, timed out. A suite the kernel killed for memory goes the same way: the
module that runs out is one failing test.

In: the checkout's files, the test command, the limits. Out: one `TestRun`, as a whole-suite run would have been.
Never: a module run beyond the run's deadline."""
from __future__ import annotations

import posixpath
import time
from collections.abc import Mapping, Sequence

from bot.failures import Failure
from bot.fix.reproduce.command import TestCommand
from bot.fix.reproduce.testrun import pytest_job, read_run
from bot.fix.types import TestRun
from sandbox import Sandbox

MODULE_TIMEOUT_S = 300.0
_TEST_FILE = ("test_", "_test.py", "_tests.py")


def test_modules(files: Mapping[str, bytes], command: TestCommand, pythonpath: Sequence[str] = ()) -> list[str]:
    """The test modules the command's paths hold (all of the checkout's when it names none), in path order."""
    roots = [a.split("::", 1)[0].rstrip("/") for a in command.pytest_args(files, pythonpath=pythonpath)
             if not a.startswith("-")]
    roots = [r for r in roots if r in files or any(p.startswith(r + "/") for p in files)] or [""]

    def under(path: str) -> bool:
        return any(not r or r == "." or path == r or path.startswith(r + "/") for r in roots)

    def is_test(path: str) -> bool:
        name = posixpath.basename(path)
        return path.endswith(".py") and (name.startswith(_TEST_FILE[0]) or name.endswith(_TEST_FILE[1:]))

    return sorted(p for p in files if is_test(p) and under(p))


def merged(command: tuple[str, ...], runs: Sequence[TestRun], hung: Sequence[tuple[str, TestRun]],
           unrun: Sequence[str] = ()) -> TestRun:
    """One run of the module runs; each module in `hung` is a failing test of its own, timed out; modules left
    `unrun` at the deadline make the run one that did not finish."""
    coverage: dict[str, dict[int, frozenset[str]]] = {}
    for run in runs:
        for path, lines in (run.coverage or {}).items():
            into = coverage.setdefault(path, {})
            for line, ids in lines.items():
                into[line] = into.get(line, frozenset()) | ids
    stuck = [Failure(module, module, None, None, None, None, "MemoryError" if run.oom_killed else "Timeout",
                     "the module's tests ran out of memory" if run.oom_killed else
                     f"the module's tests did not finish in {run.duration_s:.0f} s, although each test has a time "
                     "limit", ()) for module, run in hung]
    return TestRun(command=command, exit_code=max((r.exit_code for r in runs), default=0) or (1 if hung else 0),
                   passed=frozenset().union(*(r.passed for r in runs)),
                   failed=frozenset().union(*(r.failed for r in runs), (m for m, _ in hung)),
                   failures=tuple(f for r in runs for f in r.failures) + tuple(stuck),
                   duration_s=sum(r.duration_s for r in runs) + sum(r.duration_s for _, r in hung),
                   output="\n".join(r.output[-2000:] for r in (*runs, *(r for _, r in hung))),
                   timed_out=bool(unrun),
                   coverage=coverage if any(r.coverage is not None for r in runs) else None,
                   durations={k: v for r in runs for k, v in r.durations.items()},
                   timeouts=frozenset().union(*(r.timeouts for r in runs), (m for m, _ in hung)),
                   network={k: v for r in runs for k, v in r.network.items()},
                   programs={k: v for r in runs for k, v in r.programs.items()})


def run_by_module(sandbox: Sandbox, files: Mapping[str, bytes], command: TestCommand, *,
                  pythonpath: Sequence[str], test_timeout: float, deadline: float, coverage: bool) -> TestRun | None:
    """The suite run one test module at a time, merged (see the module doc); None when the command's paths hold
    no test module fixbot can name (a project's own `python_files`): there is nothing to run apart."""
    modules = test_modules(files, command, pythonpath)
    if not modules:
        return None
    runs: list[TestRun] = []
    hung: list[tuple[str, TestRun]] = []
    pool = max(1, int(getattr(sandbox, "pool_size", 1)))
    unrun: list[str] = []
    for start in range(0, len(modules), pool):
        left = deadline - time.monotonic()
        if left <= 1:
            unrun = modules[start:]
            break
        batch = modules[start:start + pool]
        jobs = [pytest_job(files, command, pythonpath=pythonpath, select=(m,), coverage=coverage,
                           timeout=min(MODULE_TIMEOUT_S, left), test_timeout=test_timeout) for m in batch]
        for module, job, result in zip(batch, jobs, sandbox.run_batch(jobs)):
            run = read_run(job, result, strict=False)
            (hung.append((module, run)) if run.timed_out or run.oom_killed else runs.append(run))
    argv = ("python3", "-m", "pytest", *command.pytest_args(files, pythonpath=pythonpath))
    return merged(argv, runs, hung, unrun)
