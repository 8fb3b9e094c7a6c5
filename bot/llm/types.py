"""The records that cross the `bot.llm` border, and the `LLM` protocol every backend meets."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Protocol, Sequence, runtime_checkable

Role = Literal["system", "user", "assistant"]
ROLES: tuple[Role, ...] = ("system", "user", "assistant")


@dataclass(frozen=True)
class Message:
    role: Role
    content: str

    def __post_init__(self) -> None:
        # A wrong role or a non-string content is a programming error in our own code, so it
        # fails loudly here rather than as a confusing 400 from a server or a template error.
        if self.role not in ROLES:
            raise ValueError(f"message role must be one of {', '.join(ROLES)}, not {self.role!r}")
        if not isinstance(self.content, str):
            raise TypeError(f"message content must be str, not {type(self.content).__name__}")

    def to_dict(self) -> dict[str, str]:
        """The wire shape that OpenAI-style chat APIs and chat templates expect."""
        return {"role": self.role, "content": self.content}


@dataclass(frozen=True)
class Completion:
    text: str
    prompt_tokens: int
    completion_tokens: int
    latency_s: float  # wall time of the whole `complete` call, retries and waits included
    model: str = ""
    finish_reason: str | None = None  # "stop", "length" (hit max_tokens), ... when the backend says
    attempts: int = 1  # requests made, > 1 only when a remote backend retried


@runtime_checkable
class LLM(Protocol):
    def complete(self, messages: Sequence[Message], *, temperature: float = 0.0, max_tokens: int = 512,
                 seed: int | None = None) -> Completion:
        """Answer the conversation. temperature 0 is greedy; seed makes sampling repeatable where the backend can."""
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
