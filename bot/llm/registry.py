"""Opening a model: the backend a `ModelSpec` names, built with the options the caller gives (bot/llm/spec.py
parses the spec; the backends import only that parser, so that nothing here is imported by them).

In: a spec (`llamacpp:bundled`, `openai:gpt-4o-mini`, ...) and options. Out: an `LLM`. Never: a backend's heavy
dependencies imported before it is chosen (`scripted:` must not import openai, llama_cpp or torch)."""
from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

from bot.llm.errors import BadModelSpec
from bot.llm.spec import Kind, ModelSpec, parse_model_spec
from bot.llm.types import LLM


def open_llm(spec: str | ModelSpec, **options: Any) -> LLM:
    """Build the backend for `spec`. Options left as None are ignored, so a CLI can pass every flag it
    has; an option that the chosen backend does not take is a user mistake and says so."""
    parsed = spec if isinstance(spec, ModelSpec) else parse_model_spec(spec)
    given = {k: v for k, v in options.items() if v is not None}
    factory = _factory(parsed.kind)
    _check_options(parsed, factory, given)
    return factory(parsed, **given)


def _factory(kind: Kind) -> Callable[..., LLM]:
    # Imports stay inside: choosing `scripted:` must not import openai, llama_cpp or torch.
    if kind == "openai":
        from bot.llm.openai_backend import OpenAILLM

        return OpenAILLM.from_spec
    if kind == "llamacpp":
        from bot.llm.llamacpp_backend import LlamaCppLLM

        return LlamaCppLLM.from_spec
    if kind == "transformers":
        from bot.llm.transformers_backend import TransformersLLM

        return TransformersLLM.from_spec
    from bot.llm.scripted import ScriptedLLM

    return ScriptedLLM.from_spec


def _check_options(spec: ModelSpec, factory: Callable[..., LLM], given: dict[str, Any]) -> None:
    params = inspect.signature(factory).parameters
    accepted = [n for n, p in params.items() if p.kind is inspect.Parameter.KEYWORD_ONLY]
    unknown = sorted(set(given) - set(accepted))
    if unknown:
        raise BadModelSpec(f"option(s) {', '.join(unknown)} do not apply to {spec.kind}: models "
                           f"(it takes {', '.join(accepted) or 'no options'})")
