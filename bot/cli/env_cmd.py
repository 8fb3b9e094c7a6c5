"""`fixbot env PATH`: the test environment fixbot would build for a repository, shown and built, no repair."""
from __future__ import annotations

import argparse
import shlex
import sys
import time

from bot.checkout.repository import DEFAULT_MAX_MB, load_checkout
from bot.cli.fix_cmd import add_env_args, env_request_from
from bot.environment.pip_settings import pip_settings
from bot.environment.prepare import cache_tag, image_lock, plan_environment, prepare_environment
from sandbox.containers import connect
from sandbox.image import default_image, image_exists


def _say(message: str) -> None:
    print(message, flush=True)


def cmd_env(args: argparse.Namespace) -> int:
    checkout = load_checkout(args.path, max_mb=args.max_repo_mb)
    request = env_request_from(args, checkout.root)
    choice, plan = plan_environment(checkout, request)
    client = connect()
    base = default_image(choice.version)
    _say(f"python:  {choice.version} ({choice.source})")
    _say(f"base:    {base} ({'present' if image_exists(client, base) else 'missing'})")
    for note in plan.notes:
        _say(f"note:    {note}")
    if not plan.steps:
        _say("install: nothing (no setup.py, setup.cfg, pyproject.toml, requirements file or tox deps)")
    else:
        _say(f"install: {len(plan.steps)} step(s), in a copy of the repository"
             + (" (your setup commands)" if plan.custom else f" (from {', '.join(plan.sources)})"))
        for number, step in enumerate(plan.steps, 1):
            _say(f"  {number}. {step.what}\n       $ {shlex.join(step.argv)}")
        pip = pip_settings(plan.index_urls)
        _say(f"network: the build reaches {', '.join(pip.hosts)} only; the tests run with no network")
        if image_exists(client, base):
            cached = cache_tag(client.images.get(base).id, choice.version, plan, pip)
            _say(f"image:   {cached} ({'cached' if image_exists(client, cached) else 'not built yet'})")
    if args.dry_run:
        return 0
    start = time.monotonic()
    env = prepare_environment(checkout, request, client=client, log=lambda m: _say("  " + m))
    lock = env.lock or image_lock(client, env.image)
    _say(f"ready:   {env.image} in {time.monotonic() - start:.1f} s"
         + (f", {len(lock)} package(s):" if lock else ""))
    if env.pins:
        _say(f"pinned:  {', '.join(env.pins)} (the lowest the project declares: the checkout does not import "
             "with newer versions)")
    if env.floors:
        _say("newer:   " + ", ".join(f"{f.dist} {f.version} (declared >= {f.lowest})" for f in env.floors)
             + "; `fixbot fix` goes back to the declared version when tests fail inside one")
    if args.lock:
        sys.stdout.write("".join(f"  {line}\n" for line in lock))
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser(
        "env", help="show and build the test environment of a repository (no repair)",
        description="Prints which Python fixbot would run a repository's tests on and why, the pip commands that "
                    "install the project and its declared dependencies (setup.py, setup.cfg, pyproject.toml, "
                    "requirements files, tox deps), where the build may connect to, and the cached image; then "
                    "builds it (or reuses it), exactly as `fixbot fix` does before repairing. A dependency too new "
                    "for the checkout (one of its modules cannot import a name from it) is held at the lowest "
                    "version the project declares, and printed as pinned. A dependency installed above the version the "
                    "project declares is printed as newer: `fixbot fix` goes back to the declared version when "
                    "failing tests raise inside it and fewer fail that way.")
    parser.add_argument("path", metavar="PATH", help="the repository's top directory")
    add_env_args(parser)
    parser.add_argument("--dry-run", action="store_true", help="print the plan; build nothing")
    parser.add_argument("--lock", action="store_true", help="also print every installed package with its version")
    parser.add_argument("--max-repo-mb", type=float, default=DEFAULT_MAX_MB, metavar="MB",
                        help=f"refuse repositories larger than this (default {DEFAULT_MAX_MB:g})")
    parser.set_defaults(handler=cmd_env)
