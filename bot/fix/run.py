"""The fix pipeline's composition root: a checkout and options in, a `FixResult` out, with its run-time
dependencies built here (the environment image, the Docker sandbox, the model loaded on first use). `fixbot fix`
and `fixbot ci` both call `fix_checkout`."""
from __future__ import annotations

from collections.abc import Callable

from sandbox import open_sandbox
from sandbox.containers import connect

from ..llm.lazy import LazyModel
from .environment import EnvRequest, prepare_environment
from .pipeline import FixOptions, FixRun, fix
from .result import FixResult
from .types import Checkout


def fix_checkout(checkout: Checkout, options: FixOptions, *, model: str, api_base: str | None = None,
                 api_key: str | None = None, env_request: EnvRequest | None = None,
                 say: Callable[[str], None]) -> FixResult:
    """The pipeline with its run-time dependencies: the environment image, the sandbox, the (lazy) model."""
    client = connect()
    env = prepare_environment(checkout, env_request or EnvRequest(), client=client, log=lambda m: say("  " + m))
    llm = LazyModel(model, api_base=api_base, api_key=api_key, say=say)
    try:
        with open_sandbox("docker", image=env.image, pool_size=2) as sandbox:
            run = FixRun(llm=llm, sandbox=sandbox, pythonpath=env.pythonpath, setup_s=env.setup_s, say=say)
            return fix(checkout, run, options, model=model)
    finally:
        llm.close()
