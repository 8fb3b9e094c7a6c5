"""The fix pipeline's composition root: a checkout and options in, a `FixResult` out, with its run-time
dependencies built here (the environment image, the Docker sandbox, the model loaded on first use). `fixbot fix`
and `fixbot ci` both call `fix_checkout`."""
from __future__ import annotations

from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import replace

import docker

from bot.checkout.repository import Checkout
from bot.environment.build import DependencyInstallFailed
from bot.environment.prepare import EnvRequest, prepare_environment
from bot.errors import UserError
from bot.fix.context import EnvChange, FixRun
from bot.fix.options import FixOptions
from bot.fix.pipeline import fix
from bot.fix.result import FixResult
from bot.llm.lazy import LazyModel
from sandbox import Limits, Sandbox, open_sandbox
from sandbox.containers import connect
from sandbox.image import PYTHONS

POOL_SIZE = 2
# a project's whole suite in one process holds more than a candidate function's tests: a CI runner has 7 GB
SUITE_LIMITS = Limits(memory_mb=4096, pids=512)


def fix_checkout(checkout: Checkout, options: FixOptions, *, model: str, api_base: str | None = None,
                 api_key: str | None = None, env_request: EnvRequest | None = None,
                 say: Callable[[str], None]) -> FixResult:
    """The pipeline with its run-time dependencies: the environment image, the sandbox, the (lazy) model."""
    client = connect()
    request = env_request or EnvRequest()
    env = prepare_environment(checkout, request, client=client, log=lambda m: say("  " + m))
    checkout = replace(checkout, files=env.with_generated(checkout.files))
    llm = LazyModel(model, api_base=api_base, api_key=api_key, say=say)
    try:
        with ExitStack() as sandboxes:
            sandbox = sandboxes.enter_context(_suite_sandbox(env.image))
            run = FixRun(llm=llm, sandbox=sandbox, pythonpath=env.pythonpath, setup_s=env.setup_s, say=say,
                         floors=env.floors, python=env.python.version, older=older_pythons(env.python.version),
                         rebuild=_rebuilder(client, checkout, request, sandboxes, say) if env.floors else None,
                         commit_date=request.commit_date, as_of=env.as_of,
                         rebuild_as=None if request.setup or request.python else
                         _changed(client, checkout, request, sandboxes, say))
            return fix(checkout, run, options, model=model)
    finally:
        llm.close()


def _rebuilder(client: docker.DockerClient, checkout: Checkout, request: EnvRequest, sandboxes: ExitStack,
               say: Callable[[str], None]) -> Callable[[tuple[str, ...]], Sandbox | None]:
    """The environment built again with some dependencies held back (bot/fix/reproduce/hold_back.py), as a sandbox that
    `sandboxes` closes; None when those versions do not install."""
    def rebuild(pins: tuple[str, ...]) -> Sandbox | None:
        try:
            env = prepare_environment(checkout, replace(request, hold_back=pins), client=client,
                                      log=lambda m: say("  " + m))
        except DependencyInstallFailed as exc:
            say(f"  that does not install ({exc.last_line}); keeping the newest versions")
            return None
        return sandboxes.enter_context(_suite_sandbox(env.image))
    return rebuild


def _changed(client: docker.DockerClient, checkout: Checkout, request: EnvRequest, sandboxes: ExitStack,
             say: Callable[[str], None]) -> Callable[[EnvChange], tuple[Sandbox, str] | None]:
    """The environment on another Python or as of a date (bot/fix/reproduce/env_retry.py), as a sandbox that `sandboxes`
    closes, with the Python it runs; None when it does not build. Not for a user's own `--python` or `setup`."""
    def build(change: EnvChange) -> tuple[Sandbox, str] | None:
        wanted = replace(request, python=change.python, as_of=change.as_of, hold_back=change.hold_back)
        try:
            env = prepare_environment(checkout, wanted, client=client, log=lambda m: say("  " + m))
        except UserError as exc:
            say(f"  that does not build ({getattr(exc, 'last_line', '') or ' '.join(str(exc).split())[:200]})")
            return None
        return sandboxes.enter_context(_suite_sandbox(env.image)), \
            env.python.version
    return build


def _suite_sandbox(image: str) -> Sandbox:
    return open_sandbox("docker", image=image, pool_size=POOL_SIZE, limits=SUITE_LIMITS)


def older_pythons(python: str) -> tuple[str, ...]:
    """The Pythons fixbot has a sandbox base for that are older than `python`, newest first."""
    def key(version: str) -> tuple[int, ...]:
        return tuple(int(p) for p in version.split("."))
    return tuple(sorted((v for v in PYTHONS if key(v) < key(python)), key=key, reverse=True))
