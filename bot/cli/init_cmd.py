"""`fixbot init [PATH]`: write fixbot's workflow and `.github/fixbot.yml` into a repository."""
from __future__ import annotations

import argparse

from bot.init.plan import plan_init, write_plan
from bot.init.report import describe, files_text
from bot.init.templates import TRIGGERS


def cmd_init(args: argparse.Namespace) -> int:
    plan = plan_init(args.path, trigger=args.trigger, workflow=args.workflow)
    if args.dry_run:
        print(files_text(plan))
    else:
        write_plan(plan, force=args.force)
    print("\n".join(describe(plan, dry_run=args.dry_run)))
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser(
        "init", help="set fixbot up in a repository: its workflow and .github/fixbot.yml",
        description="Writes .github/workflows/fixbot.yml (by default a test job that ends with fixbot when the "
                    "tests fail) and .github/fixbot.yml, with the test command and Python found in the repository "
                    "(its CI workflow's test step, tox.ini, pytest's configuration, a unittest layout). Existing "
                    "files are never overwritten without --force.")
    parser.add_argument("path", metavar="PATH", nargs="?", default=".",
                        help="the repository's top directory (default: the current directory)")
    parser.add_argument("--trigger", choices=TRIGGERS, default="in-job",
                        help="in-job (default): the tests and fixbot in one job, no privileged trigger; "
                             "workflow_run: react to your CI workflow when it fails; dispatch: run by hand with a "
                             "failed run's id")
    parser.add_argument("--workflow", metavar="NAME",
                        help="the `name:` of your CI workflow: the one workflow_run reacts to, and where the test "
                             "command and Python are read (default: the one workflow under .github/workflows "
                             "that runs the tests)")
    parser.add_argument("--force", action="store_true", help="overwrite the two files when they exist")
    parser.add_argument("--dry-run", action="store_true", help="print the files instead of writing them")
    parser.set_defaults(handler=cmd_init)
