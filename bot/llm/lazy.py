"""A model opened at its first call: a run that never needs it (a green suite, a search-only eval) never loads
a 1 GB model."""
from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Any

from bot.llm.errors import ScoringUnsupported, ToolsUnsupported
from bot.llm.registry import open_llm
from bot.llm.types import LLM, Completion, JsonLLM, Message, ScoringLLM, Tool, ToolLLM


class LazyModel:
    def __init__(self, spec: str, *, api_base: str | None = None, api_key: str | None = None,
                 say: Callable[[str], None] = lambda message: None) -> None:
        self._open = lambda: open_llm(spec, api_base=api_base or None, api_key=api_key or None)
        self._say = say
        self._llm: LLM | None = None
        self._lock = threading.Lock()
        self.name = spec

    def _model(self) -> LLM:
        with self._lock:
            if self._llm is None:
                self._say(f"  loading {self.name}...")
                self._llm = self._open()
            return self._llm

    def complete(self, messages: Sequence[Message], *, temperature: float = 0.0, max_tokens: int = 512,
                 seed: int | None = None) -> Completion:
        return self._model().complete(messages, temperature=temperature, max_tokens=max_tokens, seed=seed)

    def complete_with_tools(self, messages: Sequence[Message], tools: Sequence[Tool], *, temperature: float = 0.0,
                            max_tokens: int = 512, seed: int | None = None) -> Completion:
        llm = self._model()
        if not isinstance(llm, ToolLLM):
            raise ToolsUnsupported(f"{self.name} cannot call tools")
        return llm.complete_with_tools(messages, tools, temperature=temperature, max_tokens=max_tokens, seed=seed)

    def complete_json(self, messages: Sequence[Message], schema: dict[str, Any], *, temperature: float = 0.0,
                      max_tokens: int = 512, seed: int | None = None) -> Completion:
        llm = self._model()
        if not isinstance(llm, JsonLLM):  # the schema is a help, not a requirement: the caller parses either way
            return llm.complete(messages, temperature=temperature, max_tokens=max_tokens, seed=seed)
        return llm.complete_json(messages, schema, temperature=temperature, max_tokens=max_tokens, seed=seed)

    def logprobs(self, prefix: str, texts: Sequence[str]) -> list[float]:
        llm = self._model()
        if not isinstance(llm, ScoringLLM):
            raise ScoringUnsupported(f"{self.name} cannot score texts")
        return llm.logprobs(prefix, texts)

    def close(self) -> None:
        close = getattr(self._llm, "close", None)
        if close:
            close()
