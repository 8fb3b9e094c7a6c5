"""Entry point of `fixbot`: parse, dispatch, and turn user mistakes into one line and exit status 2."""
from __future__ import annotations

import argparse
import io
import logging
import os
import signal
import sys
from importlib.metadata import PackageNotFoundError, version

from bot.cli import ci_cmd, env_cmd, eval_cmd, fix_cmd, graph_cmd, init_cmd, sandbox_cmd
from bot.errors import Stopped, UserError
from bot.llm.errors import LLMError
from sandbox.errors import SandboxError

EXIT_BAD_INPUT = 2
EXIT_INTERRUPTED = 130
USER_ERRORS: tuple[type[Exception], ...] = (UserError, SandboxError, LLMError)
SUBCOMMANDS = (fix_cmd, ci_cmd, env_cmd, init_cmd, eval_cmd, graph_cmd, sandbox_cmd)


def _version() -> str:
    try:
        return version("fixbot")
    except PackageNotFoundError:
        return "unknown"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="fixbot",
        description="fixbot turns red CI green: it finds the function behind a failing test, repairs it with "
                    "a reflection agent whose candidates run in a Docker sandbox, and proposes a minimal diff.",
        epilog="Run `fixbot COMMAND --help` for the options of each command.",
    )
    parser.add_argument("--version", action="version", version=f"fixbot {_version()}")
    parser.add_argument("-v", "--verbose", action="store_true", help="show debug logging")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for module in SUBCOMMANDS:
        module.register(sub)
    return parser


OWN_LOGGERS = ("bot", "sandbox", "eval", "fixbot")
NOISY_LOGGERS = ("urllib3", "docker", "httpx", "httpcore")


def configure_logging(verbose: bool) -> None:
    """fixbot's own messages from INFO up; other libraries' only when they warn (matplotlib, say, announces its
    font cache at INFO). --verbose shows every library's debug records but the HTTP clients' chatter."""
    logging.basicConfig(level=logging.DEBUG if verbose else logging.WARNING, format="fixbot: %(message)s")
    for own in OWN_LOGGERS:
        logging.getLogger(own).setLevel(logging.DEBUG if verbose else logging.INFO)
    for noisy in NOISY_LOGGERS:
        logging.getLogger(noisy).setLevel(logging.WARNING)


def _terminate(signum: int, _frame: object) -> None:
    # SIGTERM (CI cancelling a job) unwinds like Ctrl-C: the pipeline writes its report with what it has, and
    # sandbox containers are removed on the way out.
    raise Stopped(signal.Signals(signum).name, signal_number=signum)


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if isinstance(sys.stdout, io.TextIOWrapper):  # progress lines must reach a pipe or a file as they happen
        sys.stdout.reconfigure(line_buffering=True)
    configure_logging(args.verbose)
    signal.signal(signal.SIGTERM, _terminate)
    try:
        return int(args.handler(args) or 0)
    except USER_ERRORS as exc:
        print(f"fixbot: error: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except BrokenPipeError:  # `fixbot ... | head`: the reader left; nothing more to say
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141
    except (KeyboardInterrupt, Stopped) as exc:
        print("fixbot: interrupted", file=sys.stderr)
        return 128 + exc.signal_number if isinstance(exc, Stopped) and exc.signal_number else EXIT_INTERRUPTED


if __name__ == "__main__":
    sys.exit(main())
