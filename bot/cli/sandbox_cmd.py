"""`fixbot sandbox build | run | gc | info`: manage and try the sandbox on its own."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from bot.errors import UserError
from sandbox import Limits, open_sandbox
from sandbox.containers import connect, leftovers, remove
from sandbox.image import (
    DEFAULT_PYTHON,
    IMAGE_ENV_VAR,
    PYTHONS,
    ImageSpec,
    build_command,
    build_from_dockerfile,
    build_offline,
    default_image,
    image_exists,
)

EXIT_TIMEOUT = 124


def _say(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def _pythons(choice: str) -> list[str]:
    return list(PYTHONS) if choice == "all" else [choice]


def cmd_build(args: argparse.Namespace) -> int:
    pythons = _pythons(args.python)
    if args.base and len(pythons) > 1:
        raise UserError("--base names one image: give it with one --python version, not all")
    client = connect()
    for python in pythons:
        spec = ImageSpec(python=python)
        if image_exists(client, spec.tag()) and not args.force:
            _say(f"sandbox image {spec.tag()} (Python {python}) is present (use --force to rebuild)")
            continue
        if args.offline:
            tag = build_offline(client, spec, _say, mirror=args.mirror)
        else:
            tag = build_from_dockerfile(client, spec, _say, base=args.base)
        _say(f"built sandbox image {tag} (Python {python}, Debian {spec.suite})")
    return 0


def _read_files(paths: list[str]) -> dict[str, bytes]:
    files = {}
    for raw in paths:
        path = Path(raw)
        if not path.is_file():
            raise UserError(f"--file {raw}: not a readable file")
        files[path.name] = path.read_bytes()
    return files


def cmd_run(args: argparse.Namespace) -> int:
    command = args.cmd[1:] if args.cmd[:1] == ["--"] else args.cmd
    if not command:
        raise UserError("no command given: fixbot sandbox run [--file F] -- python3 F")
    limits = Limits(memory_mb=args.memory_mb, cpus=args.cpus)
    with open_sandbox("local" if args.local else "docker", limits=limits, pool_size=1) as sb:
        result = sb.run(_read_files(args.file), command, timeout=args.timeout)
    sys.stdout.write(result.stdout)
    sys.stderr.write(result.stderr)
    notes = [n for n, on in (("timed out", result.timed_out), ("out of memory", result.oom_killed),
                             ("output truncated", result.truncated)) if on]
    _say(f"[sandbox] exit {result.exit_code} in {result.duration_s:.2f}s" + (f" ({', '.join(notes)})" if notes else ""))
    if result.timed_out:
        return EXIT_TIMEOUT
    return result.exit_code if result.exit_code >= 0 else 128 - result.exit_code


def cmd_gc(args: argparse.Namespace) -> int:
    client = connect()
    ids = leftovers(client, everything=args.all)
    for cid in ids:
        remove(client, cid)
    _say(f"removed {len(ids)} sandbox container(s)")
    return 0


def cmd_info(args: argparse.Namespace) -> int:
    client = connect()
    print("python  debian    image")
    for python, suite in PYTHONS.items():
        image = default_image(python)
        notes = ["default"] if python == DEFAULT_PYTHON else []
        if image != ImageSpec(python=python).tag():
            notes.append(f"from ${IMAGE_ENV_VAR}")
        notes.append("present" if image_exists(client, image) else f"missing: run `{build_command(image)}`")
        print(f"{python:<7} {suite:<9} {image} ({', '.join(notes)})")
    print(f"limits: {Limits()}")
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("sandbox", help="build, try and clean up the Docker sandbox",
                            description="The sandbox runs candidate code isolated: no network, non-root, "
                                        "read-only root, memory/pids/CPU limits, a wall-clock kill.")
    actions = parser.add_subparsers(dest="action", required=True, metavar="ACTION")

    build = actions.add_parser("build", help="build a sandbox image, one per Python (reused when present)")
    build.add_argument("--python", choices=[*PYTHONS, "all"], default=DEFAULT_PYTHON,
                       help=f"the Python of the image: {', '.join(f'{v} (Debian {s})' for v, s in PYTHONS.items())}, "
                            f"or all three (default {DEFAULT_PYTHON})")
    build.add_argument("--offline", action="store_true",
                       help="bootstrap a Debian base from this machine's apt mirror (mmdebstrap + docker import); "
                            "no container registry needed")
    build.add_argument("--mirror", metavar="URL", help="with --offline: a Debian mirror instead of the apt sources")
    build.add_argument("--base", metavar="IMAGE",
                       help="without --offline: the Dockerfile's base image (default python:X.Y-slim)")
    build.add_argument("--force", action="store_true", help="rebuild even when the image is present")
    build.set_defaults(handler=cmd_build)

    run = actions.add_parser("run", help="run one command in a fresh sandbox work dir",
                             description="Example: fixbot sandbox run --file test_x.py -- python3 -m pytest -q")
    run.add_argument("--file", action="append", default=[], metavar="PATH",
                     help="copy this file into the work dir (repeatable)")
    run.add_argument("--timeout", type=float, default=30.0, metavar="S", help="wall-clock limit (default 30)")
    run.add_argument("--memory-mb", type=int, default=Limits().memory_mb, metavar="MB")
    run.add_argument("--cpus", type=float, default=Limits().cpus)
    run.add_argument("--local", action="store_true",
                     help="run on this machine instead of Docker: NOT isolation, only for explicit opt-in")
    run.add_argument("cmd", nargs=argparse.REMAINDER, metavar="-- COMMAND", help="the command and its arguments")
    run.set_defaults(handler=cmd_run)

    gc = actions.add_parser("gc", help="remove sandbox containers left by a crashed run")
    gc.add_argument("--all", action="store_true", help="remove every fixbot sandbox container, even live ones")
    gc.set_defaults(handler=cmd_gc)

    info = actions.add_parser("info", help="show each Python's image, whether it is present, and the limits")
    info.set_defaults(handler=cmd_info)
