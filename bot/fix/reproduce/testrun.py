"""Running a repository's tests in the sandbox: the pytest command, the job, and the `TestRun` read back.

Every run carries fixbot's pytest plugin (`probe.py`, loaded with `-p fixbot_probe`) for exact node ids and,
on request, per-test coverage; JUnit XML (read by bot.failures with junitparser) gives the failure details.
"""
from __future__ import annotations

import functools
import json
import logging
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from importlib import resources

from bot.errors import UserError
from bot.failures import Failure, Frame, ParseError, parse_junit, parse_pytest_output
from bot.feedback import MEMORY_ERROR, NOT_COLLECTED, TIMEOUT_ERROR
from bot.fix.reproduce.broken_conftest import BrokenConftest, broken_conftest
from bot.fix.reproduce.command import BadTestCommand, TestCommand
from bot.fix.reproduce.command_env import pythonpath_entries
from bot.fix.types import TestRun
from sandbox import Job, Limits, RunResult, Sandbox

PROBE_MODULES = ("probe", "probe_coverage", "probe_memory", "probe_network", "probe_variants", "probe_swap",
                 "probe_others")  # bot/inside/NAME.py, shipped as fixbot_NAME.py
PROBE_DIR = ".fixbot-probe"
PROBE_OUT = f"{PROBE_DIR}/probe.json"
COVERAGE_OUT = f"{PROBE_DIR}/coverage.json"  # written beside PROBE_OUT by the probe
JUNIT = f"{PROBE_DIR}/junit.xml"
SELECT = f"{PROBE_DIR}/select.json"  # the node ids to run, read by the probe
VARIANTS = f"{PROBE_DIR}/variants.json"  # the manifest of the variants forked from one job's process
VARIANT_DIR = PROBE_DIR + "/v{}"  # each forked variant's outputs
VARIANT_FILES = ("status.json", "stdout", "stderr", "probe.json", "junit.xml")
TEST_MODULE = re.compile(r"(^|/)(test_[^/]*|[^/]*_tests?|tests?|conftest)\.py$")
CHILD_SLACK_S = 10.0  # a forked variant's time beyond its tests' limits: the fork, the swap, pytest's summary
# --continue-on-collection-errors: a module broken by a syntax error must not hide which other tests pass
FIXBOT_FLAGS = ("-p", "fixbot_probe", "-p", "no:cacheprovider", "--continue-on-collection-errors",
                "--junitxml", JUNIT, "-o", "junit_family=xunit1", "-o", "junit_logging=no", "--tb=long", "-rfE",
                "--color=no")
USAGE_ERROR = 4  # pytest's exit code for bad arguments
NO_TESTS = 5  # pytest's exit code when it collected nothing
log = logging.getLogger(__name__)


class NoTests(UserError):
    """pytest found no tests to run."""


@functools.cache
def probe_files() -> dict[str, str]:
    """fixbot's pytest plugin and its helpers (the memory guard, the variants' runner and its code swap), as the
    probe dir holds them in the sandbox."""
    package = resources.files("bot.inside")
    files = {f"{PROBE_DIR}/fixbot_{name}.py": package.joinpath(f"{name}.py").read_text(encoding="utf-8")
             for name in PROBE_MODULES}
    shared = resources.files("sandbox").joinpath("assets/fixbot_processes.py")  # the sandbox runner's helpers too
    files[f"{PROBE_DIR}/fixbot_processes.py"] = shared.read_text(encoding="utf-8")
    return files


def pytest_job(files: Mapping[str, bytes], command: TestCommand, *, pythonpath: Sequence[str] = (),
               select: Iterable[str] = (), coverage: bool = False, timeout: float = 300.0,
               test_timeout: float | None = None) -> Job:
    """The job running `command` (only the `select`ed node ids when given) over the repository's `files`, each
    test limited to `test_timeout` seconds when given.

    The selection goes to the probe in a file, never onto the command line: pytest calls a node id whose module
    fails to import "not found" (a usage error, exit 4), and resolves command-line ids against the working
    directory while the ids are relative to the rootdir. The probe runs the selected ids' files in place of the
    command's paths (the command's own paths still set the rootdir, so the ids match) and reports the ids it
    did not collect."""
    pythonpath = (*pythonpath, *pythonpath_entries(command.env))
    paths = [PROBE_DIR, *(p or "." for p in pythonpath)]
    env = {**dict(command.env), "PYTHONPATH": ":".join(paths), "FIXBOT_PROBE_OUT": PROBE_OUT,
           "FIXBOT_COVERAGE": "1" if coverage else "0"}
    if test_timeout:
        env["FIXBOT_TEST_TIMEOUT"] = repr(float(test_timeout))
    argv = ["python3", "-m", "pytest", *command.pytest_args(files, pythonpath=pythonpath), *FIXBOT_FLAGS]
    all_files: dict[str, str | bytes] = {path: data for path, data in files.items()
                                         if not path.startswith(PROBE_DIR + "/")}
    all_files.update(probe_files())
    chosen = sorted(set(select))
    if chosen:
        env["FIXBOT_SELECT"] = SELECT
        all_files[SELECT] = json.dumps(chosen)
    return Job(all_files, argv, timeout, env=env, collect=(PROBE_OUT, JUNIT, *((COVERAGE_OUT,) if coverage else ())))


def _failures(result: RunResult, root: str | None, output: str) -> list[Failure]:
    junit = result.files.get(JUNIT)
    for parse, source in ((parse_junit, junit), (parse_pytest_output, output)):
        if source:
            try:
                found = parse(source, root=root)
            except ParseError:
                continue
            if found:
                return found
    return []


def read_run(job: Job, result: RunResult, *, strict: bool = True) -> TestRun:
    """The `TestRun` of a finished job. With `strict`, a pytest usage error or an empty suite is the user's to fix
    (raised); without, whatever pytest did (a usage error, a crash, a module that fails to import, the job's
    timeout) is a run whose selected tests failed, with its output kept for the feedback."""
    output = (result.stdout + ("\n" + result.stderr if result.stderr.strip() else "")).strip()
    if result.oom_killed:  # the kill leaves no trace in pytest's own output; the feedback's tail shows this
        output += "\nfixbot: the sandbox killed the tests: they ran out of memory (a loop that keeps growing a list?)"
    conftest = broken_conftest(output) if result.exit_code == USAGE_ERROR else None
    if conftest is not None and conftest.in_project:
        return _conftest_run(job, result, output, conftest)
    if strict:
        _refuse(result, output, conftest)
    try:
        probe = json.loads(result.files.get(PROBE_OUT) or "{}")
    except ValueError:
        probe = {}
    root = probe.get("rootdir")
    outcomes: dict[str, str] = probe.get("outcomes", {})
    timeouts = frozenset(probe.get("timeouts", ()))
    failures = _failures(result, root, output)
    failed = {i for i, o in outcomes.items() if o in ("failed", "error", "missing")} | {f.test_id for f in failures}
    reported = set(outcomes) | {i.partition("::")[0] for i in outcomes}  # a module id: its tests reported
    unreported = _selection(job) - reported if result.exit_code != 0 or result.timed_out else set()
    # selected tests that never reported: pytest stopped before them (a crash, a hang, a usage error)
    failed |= unreported
    passed = {i for i, o in outcomes.items() if o == "passed"} - failed
    if not outcomes and not failures and not unreported and result.exit_code != 0:
        failed.add("<pytest>")  # pytest died before reporting anything (a crash, a timeout, a broken conftest)
    failures = _with_probe_failures(failures, probe, failed, timeouts)
    coverage = _coverage(job, result)
    return TestRun(command=tuple(job.command), exit_code=result.exit_code, passed=frozenset(passed),
                   failed=frozenset(failed), failures=tuple(f for f in failures if f.test_id in failed),
                   duration_s=result.duration_s, output=output, timed_out=result.timed_out,
                   oom_killed=result.oom_killed, coverage=coverage,
                   durations={i: float(d) for i, d in probe.get("durations", {}).items()}, timeouts=timeouts,
                   network={i: tuple(hosts) for i, hosts in probe.get("network", {}).items()},
                   services={i: tuple(found) for i, found in probe.get("services", {}).items()},
                   programs={i: tuple(names) for i, names in probe.get("programs", {}).items()})


def _coverage(job: Job, result: RunResult) -> dict[str, dict[int, frozenset[str]]] | None:
    """Which tests ran each line (the probe's coverage.json); None when none was measured or it did not come back."""
    if COVERAGE_OUT not in job.collect:
        return None
    try:
        data = json.loads(result.files[COVERAGE_OUT])
    except KeyError:
        if PROBE_OUT in result.files and not result.timed_out:
            log.warning("per-test coverage did not come back from the sandbox (too large, or the run ended before "
                        "writing it): suspects are ranked by the failures' tracebacks only")
        return None
    except ValueError:
        return None
    tests = data["tests"]
    return {path: {int(line): frozenset(tests[i] for i in ids) for line, ids in lines.items()}
            for path, lines in data["files"].items()}


def _conftest_run(job: Job, result: RunResult, output: str, conftest: BrokenConftest) -> TestRun:
    """pytest stopped before any test because the project's code a conftest imports raises: the conftest is the
    failing test (selected again, it passes once it loads; bot/inside/probe.py), and the tests selected with it did
    not run."""
    failed = frozenset({conftest.path} | _selection(job))
    return TestRun(command=tuple(job.command), exit_code=result.exit_code, passed=frozenset(), failed=failed,
                   failures=(conftest.failure,), duration_s=result.duration_s, output=output,
                   timed_out=result.timed_out)


def _refuse(result: RunResult, output: str, conftest: BrokenConftest | None) -> None:
    """The user's command is wrong (checked before repairing starts): a usage error (`conftest`, when one did not
    load), no tests, no pytest."""
    if result.exit_code == USAGE_ERROR:
        if conftest is not None:
            raise BadTestCommand(conftest.refusal())
        raise BadTestCommand("pytest refused the test command: " + _last_lines(output))
    if result.exit_code == NO_TESTS:
        raise NoTests("pytest collected no tests (give the tests' location with --test-cmd \"pytest tests/\")")
    if result.exit_code == 127:
        raise BadTestCommand("the sandbox has no pytest: " + _last_lines(output))


def _selection(job: Job) -> set[str]:
    chosen = job.files.get(SELECT)
    return set(json.loads(chosen)) if chosen else set()


def _with_probe_failures(failures: list[Failure], probe: dict, failed: set[str],
                         timeouts: frozenset[str]) -> list[Failure]:
    """The JUnit/output failures, with the probe's word on tests that timed out or used too much memory (where
    they were running) and on selected tests that were not collected (which JUnit cannot name)."""
    limit = float(probe.get("test_timeout") or 0)
    stacks = probe.get("stacks", {})
    by_id = {f.test_id: f for f in failures}
    for test_id in sorted(timeouts & failed):
        by_id[test_id] = _timeout_failure(test_id, stacks.get(test_id), by_id.get(test_id), limit)
    megabytes = int(probe.get("memory_limit_mb") or 0)
    for test_id in sorted(set(probe.get("memory", ())) & failed):
        what = "the test" if "::" in test_id else "importing the module"
        by_id[test_id] = _stopped_failure(test_id, stacks.get(test_id), by_id.get(test_id), MEMORY_ERROR,
                                          f"{what} used more than {megabytes} MB of memory")
    for test_id, outcome in sorted(probe.get("outcomes", {}).items()):
        if outcome == "missing":
            by_id[test_id] = Failure(test_id, test_id.partition("::")[0], None, None, None, None, NOT_COLLECTED,
                                     f"test {test_id} was not collected (renamed or removed, or its "
                                     "parameters changed)")
    return list(by_id.values())


def _timeout_failure(test_id: str, stack: list | None, found: Failure | None, limit: float) -> Failure:
    """A timed-out test's failure: the project frames it was running when stopped (the probe's stack, which the
    watchdog writes too, when pytest never got to report), innermost last."""
    if "::" not in test_id:  # a module whose import (its module-level code) did not end
        message = "importing the module timed out"
    else:
        message = f"the test timed out after {limit:g} s" if limit else "the test timed out"
    return _stopped_failure(test_id, stack, found, TIMEOUT_ERROR, message)


def _stopped_failure(test_id: str, stack: list | None, found: Failure | None, error_type: str,
                     message: str) -> Failure:
    """A test stopped by one of the probe's guards: its project frames when stopped, innermost last."""
    frames = tuple(Frame(str(p), int(n), str(fn), str(code) or None) for p, n, fn, code in stack or ()) \
        or (found.traceback if found else ())
    test_file = test_id.partition("::")[0]
    anchor = next((f for f in reversed(frames) if f.path == test_file), frames[-1] if frames else None)
    return Failure(test_id, anchor.path if anchor else test_file, anchor.line if anchor else None,
                   anchor.code if anchor else None, None, None, error_type, message, frames)


def _last_lines(text: str, n: int = 8) -> str:
    lines = [line for line in text.splitlines() if line.strip()]
    return " | ".join(lines[-n:]) or "no output"


def run_tests(sandbox: Sandbox, files: Mapping[str, bytes], command: TestCommand, *,
              pythonpath: Sequence[str] = (), select: Iterable[str] = (), coverage: bool = False,
              timeout: float = 300.0, test_timeout: float | None = None, strict: bool = True) -> TestRun:
    """One run; `strict` (the user's own command, before repairing starts) raises on a usage error or no tests."""
    return run_many(sandbox, [files], command, pythonpath=pythonpath, select=select, coverage=coverage,
                    timeout=timeout, test_timeout=test_timeout, strict=strict)[0]


def run_many(sandbox: Sandbox, variants: Sequence[Mapping[str, bytes]], command: TestCommand, *,
             pythonpath: Sequence[str] = (), select: Iterable[str] = (), coverage: bool = False,
             timeout: float = 120.0, test_timeout: float | None = None, strict: bool = False) -> list[TestRun]:
    """The same tests over several versions of the files (the agent's candidates), one `TestRun` each, in order.
    Not `strict` by default: whatever a candidate does, it is that candidate's failed run, never an exception.

    Versions that differ from another one in the project's modules only run in that one's pytest process, which
    collects once and forks for each (probe_variants.py); a version the probe cannot swap in exactly runs in a
    process of its own afterwards, as does every version of a coverage run, and the first version when the kernel
    killed its process for memory while versions were forked from it. Either way a version's `TestRun` is
    read from the same outputs as its own process would give."""
    chosen = tuple(select)

    def job(files: Mapping[str, bytes], seconds: float = timeout) -> Job:
        return pytest_job(files, command, pythonpath=pythonpath, select=chosen, coverage=coverage, timeout=seconds,
                          test_timeout=test_timeout)

    if coverage or len(variants) < 2:
        groups = [[i] for i in range(len(variants))]
    else:
        groups = _groups(variants, max(1, int(getattr(sandbox, "pool_size", 1))))
    child_s = _child_timeout(timeout, test_timeout, chosen)
    output_bytes = getattr(getattr(sandbox, "limits", None), "output_bytes", Limits().output_bytes)
    jobs = [_group_job(job(variants[group[0]], timeout + (len(group) - 1) * child_s),
                       [variants[i] for i in group], child_s, output_bytes) for group in groups]
    runs: list[TestRun | None] = [None] * len(variants)
    for group, group_job, result in zip(groups, jobs, sandbox.run_batch(jobs)):
        forked = [_variant_result(result, k) for k in range(len(group) - 1)]
        spent = sum(r.duration_s for r in forked if r is not None)
        # The OOM killer chooses its victim: the lead may have died for a child's memory, so it runs again alone.
        if not (result.oom_killed and len(group) > 1):
            runs[group[0]] = read_run(group_job, replace(result, duration_s=max(0.0, result.duration_s - spent)),
                                      strict=strict)
        for i, forked_result in zip(group[1:], forked):
            if forked_result is not None:
                runs[i] = read_run(job(variants[i]), forked_result, strict=strict)
    alone = [i for i, run in enumerate(runs) if run is None]
    log.debug("%d variant(s): %d job(s), %d forked from them, %d alone after", len(variants), len(jobs),
              sum(len(group) - 1 for group in groups) - len(alone), len(alone))
    if alone:
        again = [job(variants[i]) for i in alone]
        for i, again_job, result in zip(alone, again, sandbox.run_batch(again)):
            runs[i] = read_run(again_job, result, strict=strict)
    return [run for run in runs if run is not None]


def _swappable(path: str) -> bool:
    """A module whose functions the probe swaps in: the project's own, not a test module or conftest.py (pytest
    rewrites their asserts, and collects them) and not fixbot's."""
    return path.endswith(".py") and not path.startswith(PROBE_DIR + "/") and not TEST_MODULE.search(path)


def _changes(base: Mapping[str, bytes], files: Mapping[str, bytes]) -> dict[str, bytes] | None:
    """The files of `files` that differ from `base`; None when a file is added, removed, or not swappable."""
    if files.keys() != base.keys():
        return None
    changed = {path: data for path, data in files.items() if data is not base[path] and data != base[path]}
    return changed if all(_swappable(path) for path in changed) else None


def _groups(variants: Sequence[Mapping[str, bytes]], pool: int) -> list[list[int]]:
    """Indices of the variants, one list per job: the first runs as the job's own run and the others fork from
    it; split over the sandbox's `pool` of containers. A variant that differs in other files runs alone."""
    together = [0] + [i for i in range(1, len(variants)) if _changes(variants[0], variants[i]) is not None]
    alone = [[i] for i in range(len(variants)) if i not in set(together)]
    size = math.ceil(len(together) / min(pool, len(together)))
    return [together[at:at + size] for at in range(0, len(together), size)] + alone


def _child_timeout(timeout: float, test_timeout: float | None, chosen: Sequence[str]) -> float:
    """A forked variant's limit: its tests' own limits (each phase stops at its limit, a stuck one at twice it),
    never more than a job's."""
    if not test_timeout or not chosen or any("::" not in i for i in chosen):
        return timeout
    return min(timeout, (len(set(chosen)) + 2) * test_timeout + CHILD_SLACK_S)


def _group_job(job: Job, variants: Sequence[Mapping[str, bytes]], child_s: float, output_bytes: int) -> Job:
    """`job` (the first variant's), carrying the manifest of the others (probe_variants.py)."""
    if len(variants) == 1:
        return job
    base = variants[0]
    manifest = {"child_timeout_s": child_s, "output_bytes": output_bytes, "variants": [
        {"dir": VARIANT_DIR.format(k), "files": {path: data.decode("latin-1")
                                                 for path, data in (_changes(base, files) or {}).items()}}
        for k, files in enumerate(variants[1:])]}
    collect = [f"{VARIANT_DIR.format(k)}/{name}" for k in range(len(variants) - 1) for name in VARIANT_FILES]
    return Job({**job.files, VARIANTS: json.dumps(manifest)}, job.command, job.timeout,
               env={**job.env, "FIXBOT_VARIANTS": VARIANTS}, collect=(*job.collect, *collect))


def _variant_result(result: RunResult, k: int) -> RunResult | None:
    """The k-th forked variant's result, as its own process would have given it; None when it needs a process."""
    where = VARIANT_DIR.format(k)
    try:
        status = json.loads(result.files.get(f"{where}/status.json") or "{}")
    except ValueError:
        status = {}
    if "exit_code" not in status:
        if status.get("fallback"):
            log.debug("variant %d needs a process of its own: %s", k + 1, status["fallback"])
        return None
    files = {name: result.files[f"{where}/{own}"] for name, own in ((PROBE_OUT, "probe.json"), (JUNIT, "junit.xml"))
             if f"{where}/{own}" in result.files}
    return RunResult(exit_code=int(status["exit_code"]), stdout=result.files.get(f"{where}/stdout", ""),
                     stderr=result.files.get(f"{where}/stderr", ""), duration_s=float(status["duration_s"]),
                     timed_out=bool(status["timed_out"]), oom_killed=bool(status["oom_killed"]),
                     truncated=bool(status["truncated"]), files=files)
