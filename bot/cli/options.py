"""Options several commands share: the model and the sandbox."""
from __future__ import annotations

import argparse
import contextlib
from collections.abc import Iterator

from bot.agent.options import BLOCKS_FROM, EDIT_FORMATS, MAX_SAMPLES, SAMPLE_TEMPERATURE, EditFormat
from bot.errors import UserError
from bot.llm import DEFAULT_MODEL, LLM, open_llm, parse_model_spec
from bot.llm.llamacpp_backend import available_cores
from bot.llm.process_pool import ModelPool
from sandbox import Sandbox, open_sandbox


def add_model_args(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("model")
    group.add_argument("--model", default=DEFAULT_MODEL, metavar="SPEC",
                       help="openai:MODEL | llamacpp:bundled | llamacpp:PATH.gguf | transformers:ID_OR_DIR | "
                            f"scripted:FILE (default {DEFAULT_MODEL}: the bundled offline model)")
    group.add_argument("--api-base", metavar="URL", help="openai: server URL (default $OPENAI_BASE_URL)")
    group.add_argument("--api-key", metavar="KEY[,KEY...]", help="openai: key(s), rotated (default $OPENAI_API_KEY)")


@contextlib.contextmanager
def opened_model(args: argparse.Namespace, workers: int = 1) -> Iterator[LLM]:
    """The model for --model; an in-process one is freed on the way out, not noisily at interpreter exit.
    With several workers a llamacpp: model runs as one process per worker, the cores split between them."""
    if workers > 1 and parse_model_spec(args.model).kind == "llamacpp":
        llm: LLM = ModelPool(args.model, workers, n_threads=max(1, available_cores() // workers))
    else:
        llm = open_llm(args.model, api_base=args.api_base, api_key=args.api_key)
    try:
        yield llm
    finally:
        close = getattr(llm, "close", None)
        if close:
            close()


def add_samples_arg(parser: argparse.ArgumentParser, default: int) -> None:
    """--samples, with the command's default (checked by `check_samples`)."""
    parser.add_argument("--samples", type=int, default=default, metavar="N",
                        help=f"answers per model call (default {default}; reflect: N answers, thought-patch: N plans "
                             "each turned into its edit, tool-call: N calls): the first at the temperature "
                             f"schedule's, the others at {SAMPLE_TEMPERATURE}, all tested in one sandbox batch; the "
                             "passing code most answers agree on wins, then the fewest changed lines. The prompt is "
                             "cached, so each extra "
                             f"answer costs only its own tokens (at most {MAX_SAMPLES})")


def add_edits_arg(parser: argparse.ArgumentParser, default: EditFormat) -> None:
    """--edits: how the reflect design asks the model for a candidate."""
    parser.add_argument("--edits", choices=EDIT_FORMATS, default=default,
                        help="what the reflect design asks the model for: whole (the corrected function, written out), "
                             "blocks (SEARCH/REPLACE blocks of only the lines to change, which may be in two places) "
                             f"or auto (default {default}: blocks for code longer than {BLOCKS_FROM} lines, whose "
                             "whole rewrite would not fit one answer). An answer in either form is read either way")


def check_samples(args: argparse.Namespace) -> None:
    """Rejects a count of answers per call out of range."""
    if not 1 <= args.samples <= MAX_SAMPLES:
        raise UserError(f"--samples must be between 1 and {MAX_SAMPLES}, not {args.samples}")


def add_sandbox_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--sandbox", choices=("docker", "local"), default="docker",
                        help="where candidates run (default docker; local is NOT isolation)")


def open_sandbox_from(args: argparse.Namespace, pool_size: int = 2) -> Sandbox:
    return open_sandbox(args.sandbox, pool_size=pool_size)
