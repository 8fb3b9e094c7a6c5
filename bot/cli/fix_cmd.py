"""`fixbot fix PATH`: from a checkout with failing tests to a verified, minimal patch (and a report)."""
from __future__ import annotations

import argparse
import os
import re
import sys
from dataclasses import replace
from datetime import datetime
from pathlib import Path

from bot.agent.options import CHOICES, FIX_REPAIR
from bot.agent.types import AGENTS
from bot.checkout.repository import DEFAULT_MAX_MB, commit_date, load_checkout
from bot.cli.options import add_edits_arg, add_model_args, add_samples_arg, check_samples
from bot.environment.prepare import EnvRequest
from bot.errors import UserError
from bot.failures import parse_ci_log
from bot.fix.options import FixOptions
from bot.fix.reproduce.command import TestCommand
from bot.fix.run import fix_checkout
from bot.fix.verify.patch import PatchRejected, apply_patch
from bot.fix.verify.report import write_outputs
from bot.init.test_command import detect_checkout_tests
from bot.llm import parse_model_spec
from bot.llm.spec import require_tools


def _say(message: str) -> None:
    print(message, flush=True)


def default_out(root: str) -> Path:
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    name = re.sub(r"[^A-Za-z0-9._-]+", "-", Path(root).name) or "repo"
    return cache / "fixbot" / "fix" / name


def _log_failures(path: str | None):
    if not path:
        return ()
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise UserError(f"--from-log {path}: {exc.strerror or exc}") from None
    return tuple(parse_ci_log(data))


def env_request_from(args: argparse.Namespace, root: str) -> EnvRequest:
    return EnvRequest(python=args.python, setup=tuple(args.setup or ()), as_of=args.as_of,
                      commit_date=commit_date(root))


def add_env_args(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("test environment (see docs/environment.md)")
    group.add_argument("--python", metavar="X.Y",
                       help="the Python to run the tests on: 3.9, 3.11 or 3.13 (default: from .python-version, "
                            "requires-python / python_requires, tox's envlist or .travis.yml; else 3.11)")
    group.add_argument("--setup", action="append", metavar="CMD",
                       help="a shell command that installs the test environment, run by the build container in a "
                            "copy of the repository (repeat for several); replaces what fixbot infers from "
                            "setup.py, pyproject.toml, requirements files and tox.ini")
    group.add_argument("--as-of", metavar="DATE", type=_date,
                       help="install no release uploaded after DATE (2019-06-30, or an ISO date-time): the "
                            "dependencies as they were then. Without it, a build that fails with today's releases "
                            "is resolved again as of the checked-out commit's date")


def _date(text: str) -> str:
    try:
        return datetime.fromisoformat(text).isoformat()
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a date like 2019-06-30") from None


def cmd_fix(args: argparse.Namespace) -> int:
    if args.iterations < 1 or args.max_targets < 1:
        raise UserError("--iterations and --max-targets must be at least 1")
    if args.wall <= 0 or args.suite_timeout <= 0 or (args.test_timeout is not None and args.test_timeout <= 0):
        raise UserError("--wall, --suite-timeout and --test-timeout must be positive numbers of seconds")
    parse_model_spec(args.model)  # a bad --model fails now; the model itself loads only when needed
    check_samples(args)
    if args.agent == "tool-call":
        require_tools(args.model)
    command = TestCommand.parse(args.test_cmd) if args.test_cmd else None  # a bad one fails before any reading
    checkout = load_checkout(args.path, max_mb=args.max_repo_mb)
    if command is None:
        found = detect_checkout_tests(checkout)
        command = TestCommand.parse(found.command)
        _say(f"  tests: {found.command} (from {found.source}; --test-cmd to choose)")
    options = FixOptions(test_command=command, log_failures=_log_failures(args.from_log),
                         max_targets=args.max_targets, wall_s=args.wall,
                         suite_timeout_s=args.suite_timeout, test_timeout_s=args.test_timeout,
                         repair=replace(FIX_REPAIR, agent=args.agent, samples=args.samples,
                                        budgets=replace(FIX_REPAIR.budgets, iterations=args.iterations),
                                        search=None if args.no_search else FIX_REPAIR.search,
                                        choose=args.choose, edits=args.edits))
    out = Path(args.out).expanduser() if args.out else default_out(checkout.root)
    _say(f"fixbot fix {checkout.root} ({len(checkout.files)} files)")
    if options.log_failures:
        _say(f"  the CI log names {len(options.log_failures)} failing test(s)")
    result = fix_checkout(checkout, options, model=args.model, api_base=args.api_base, api_key=args.api_key,
                          env_request=env_request_from(args, checkout.root), say=_say)
    write_outputs(result, out)
    if result.error:
        _say(f"report: {out / 'report.md'}")
        raise UserError(result.error)
    _say(f"\n{result.status.replace('_', ' ')}: {result.message}")
    if result.explanation:
        _say(result.explanation)
    if result.status == "fixed":
        _say("")
        sys.stdout.write(result.diff)
        if args.apply:
            try:
                apply_patch(result.diff, checkout.root)
            except PatchRejected as exc:
                raise UserError(f"--apply: {exc} (the working tree changed while fixbot ran?)") from None
            _say(f"applied to {checkout.root}")
    _say(f"\nreport: {out / 'report.md'}" + (f" · patch: {out / 'fix.patch'}" if result.status == "fixed" else ""))
    return result.exit_code


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser(
        "fix", help="repair a repository's failing tests: a verified, minimal patch",
        description="Copies the repository into the Docker sandbox (the project and its declared dependencies "
                    "installed by pip once, in a build container, and cached as an image), runs its tests, re-runs "
                    "the failures (a failure that does not repeat is "
                    "flaky), ranks the functions to blame (traceback frames, the failing assertion's calls, per-test "
                    "coverage), repairs them with the agent, re-runs the whole suite, and writes fix.patch, "
                    "report.json and report.md. Exit status: 0 fixed, 1 not fixed, 2 bad input, 3 nothing to fix "
                    "(all green, flaky, or every failure the environment's: a missing module, the network).")
    parser.add_argument("path", metavar="PATH", help="the repository's top directory")
    parser.add_argument("--test-cmd", metavar="CMD",
                        help='the pytest or unittest command (default: the whole suite as the project\'s CI runs '
                             'it, found as `fixbot init` finds it: a CI workflow\'s test step, tox.ini\'s commands, '
                             'a pytest configuration, else "pytest"), e.g. "pytest -x tests/unit", '
                             '"python -m unittest discover -s tests", "python -m unittest pkg.tests.test_x"; '
                             'NAME=value words before it set the tests\' environment ("LANG=C PYTHONPATH=src pytest")')
    parser.add_argument("--from-log", metavar="FILE",
                        help="a raw CI log (GitHub Actions, or plain pytest or unittest output): fix the failures "
                             "it names, once they reproduce here")
    add_env_args(parser)
    add_model_args(parser)
    parser.add_argument("--iterations", type=int, default=FIX_REPAIR.iterations, metavar="K",
                        help=f"model calls per target (default {FIX_REPAIR.iterations})")
    parser.add_argument("--max-targets", type=int, default=FixOptions.max_targets, metavar="N",
                        help=f"functions tried in all, best-ranked first (default {FixOptions.max_targets})")
    parser.add_argument("--agent", choices=AGENTS, default=FIX_REPAIR.agent,
                        help="the repair design: reflect (default), thought-patch or tool-call "
                             "(see fixbot eval --help)")
    add_samples_arg(parser, FIX_REPAIR.samples)
    add_edits_arg(parser, FIX_REPAIR.edits)
    parser.add_argument("--no-search", action="store_true",
                        help="skip the mutation search (one-edit variants of the function, and of each failing model "
                             "candidate, run against the failing tests before and between model calls)")
    parser.add_argument("--choose", choices=CHOICES, default=FIX_REPAIR.choose,
                        help="which of several candidates that pass the tests to keep: first (default), the first "
                             "found (the search's fewest changed lines), or likeliest, the one the model finds "
                             "likeliest after the function's docstring (llamacpp: models; docs/fix.md)")
    parser.add_argument("--out", metavar="DIR", help="where fix.patch and the reports go "
                                                     "(default ~/.cache/fixbot/fix/REPO-NAME)")
    parser.add_argument("--apply", action="store_true", help="apply the patch to the working tree when fixed")
    parser.add_argument("--wall", type=float, default=FixOptions.wall_s, metavar="S",
                        help="time budget in seconds, a hard limit: the run stops and writes its report within it "
                             f"(default {FixOptions.wall_s:.0f})")
    parser.add_argument("--test-timeout", type=float, default=None, metavar="S",
                        help="per-test time limit: a test running longer fails as 'timed out', with the line it was "
                             "running, and is repaired like any failure (default: ten times the suite's slowest "
                             "passing test, 5 to 60 s)")
    parser.add_argument("--suite-timeout", type=float, default=FixOptions.suite_timeout_s, metavar="S",
                        help="the last backstop: a whole-suite run longer than this is an error "
                             f"(default {FixOptions.suite_timeout_s:.0f})")
    parser.add_argument("--max-repo-mb", type=float, default=DEFAULT_MAX_MB, metavar="MB",
                        help=f"refuse repositories larger than this (default {DEFAULT_MAX_MB:g})")
    parser.set_defaults(handler=cmd_fix)
