"""The records that cross the `bot.llm` border, and the `LLM` protocol every backend meets."""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol, runtime_checkable

Role = Literal["system", "user", "assistant", "tool"]
ROLES: tuple[Role, ...] = ("system", "user", "assistant", "tool")


@dataclass(frozen=True)
class ToolCall:
    """One function call the model asked for."""

    id: str
    name: str
    arguments: str  # the JSON text as the model wrote it: parsing it, and saying what is wrong, is the caller's job

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "type": "function", "function": {"name": self.name, "arguments": self.arguments}}


@dataclass(frozen=True)
class Tool:
    """A function the model may call: a name, what it does, and its parameters as JSON Schema."""

    name: str
    description: str
    parameters: dict[str, Any]

    def to_dict(self) -> dict[str, Any]:
        return {"type": "function",
                "function": {"name": self.name, "description": self.description, "parameters": self.parameters}}


@dataclass(frozen=True)
class Message:
    role: Role
    content: str
    tool_calls: tuple[ToolCall, ...] = ()  # an assistant turn that called tools
    tool_call_id: str = ""  # a tool turn: which call this is the result of

    def __post_init__(self) -> None:
        # A wrong role or a non-string content is a programming error in our own code, so it
        # fails loudly here rather than as a confusing 400 from a server or a template error.
        if self.role not in ROLES:
            raise ValueError(f"message role must be one of {', '.join(ROLES)}, not {self.role!r}")
        if not isinstance(self.content, str):
            raise TypeError(f"message content must be str, not {type(self.content).__name__}")

    def to_dict(self) -> dict[str, Any]:
        """The wire shape that OpenAI-style chat APIs and chat templates expect."""
        out: dict[str, Any] = {"role": self.role, "content": self.content}
        if self.tool_calls:
            out["tool_calls"] = [c.to_dict() for c in self.tool_calls]
        if self.role == "tool":
            out["tool_call_id"] = self.tool_call_id
        return out


@dataclass(frozen=True)
class Completion:
    text: str
    prompt_tokens: int
    completion_tokens: int
    latency_s: float  # wall time of the whole `complete` call, retries and waits included
    model: str = ""
    finish_reason: str | None = None  # "stop", "length" (hit max_tokens), ... when the backend says
    attempts: int = 1  # requests made, > 1 only when a remote backend retried
    tool_calls: tuple[ToolCall, ...] = ()  # from `complete_with_tools` only
    cached_tokens: int = 0  # prompt tokens reused from the backend's cache, not evaluated again (where it says)
    prompt_eval_s: float = 0.0  # of latency_s: evaluating the prompt's uncached part (where the backend says)

    @property
    def processed_tokens(self) -> int:
        """The tokens the model worked on: the prompt's uncached part and the answer (what a token budget counts,
        so that a design that asks often with one growing conversation is not charged for its cached prefix)."""
        return self.prompt_tokens - self.cached_tokens + self.completion_tokens


@runtime_checkable
class LLM(Protocol):
    def complete(self, messages: Sequence[Message], *, temperature: float = 0.0, max_tokens: int = 512,
                 seed: int | None = None) -> Completion:
        """Answer the conversation. temperature 0 is greedy; seed makes sampling repeatable where the backend can."""
        ...


@runtime_checkable
class ToolLLM(Protocol):
    """A model that can call functions (OpenAI-style tools). Backends without it simply lack the method."""

    def complete_with_tools(self, messages: Sequence[Message], tools: Sequence[Tool], *, temperature: float = 0.0,
                            max_tokens: int = 512, seed: int | None = None) -> Completion:
        """Answer with text or with calls of `tools` (in `Completion.tool_calls`)."""
        ...


@runtime_checkable
class JsonLLM(Protocol):
    """A model whose answer can be held to a JSON Schema while it is generated (a grammar, structured output).
    Backends without it lack the method; callers then ask with `complete` and parse what comes."""

    def complete_json(self, messages: Sequence[Message], schema: dict[str, Any], *, temperature: float = 0.0,
                      max_tokens: int = 512, seed: int | None = None) -> Completion:
        """Answer with JSON that `schema` admits, in `Completion.text`."""
        ...


@runtime_checkable
class ManyLLM(Protocol):
    """A model that writes several answers to one conversation at once (llama.cpp: one batch per step).
    Backends without it lack the method; callers then ask once per answer."""

    def complete_many(self, messages: Sequence[Message], *, temperatures: Sequence[float], seeds: Sequence[int],
                      max_tokens: int = 512) -> list[Completion]:
        """One answer per (temperature, seed), in that order."""
        ...


@runtime_checkable
class ScoringLLM(Protocol):
    """A model that says how likely it finds a text (llama.cpp: the logits of every position). Backends without it
    lack the method; callers then choose without it."""

    def logprobs(self, prefix: str, texts: Sequence[str]) -> list[float]:
        """Per text, the sum of its tokens' log-probabilities when it follows `prefix` (evaluated once)."""
        ...


def check_messages(messages: Sequence[Message]) -> list[Message]:
    """Reject loose dicts and empty conversations at the border, with a message that says why."""
    out = list(messages)
    if not out:
        raise ValueError("complete() needs at least one message")
    for m in out:
        if not isinstance(m, Message):
            raise TypeError(f"complete() takes bot.llm.Message records, not {type(m).__name__}")
    return out
