"""A model that replays answers written in advance, so the agent can be tested without inference."""
from __future__ import annotations

import json
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from bot.llm.errors import BadModelSpec, ScriptExhausted
from bot.llm.spec import ModelSpec
from bot.llm.types import Completion, Message, Tool, ToolCall, check_messages


class ScriptedLLM:
    """Answers with `answers[0]`, then `answers[1]`, … and raises ScriptExhausted after the last.

    An answer is text, or a tool call: `{"tool_call": {"name": "run_tests", "arguments": {...}}}` (what
    `complete_with_tools` hands back; arguments may also be the raw JSON text, right or wrong).
    Token counts are whitespace word counts: deterministic, so token-budget guards can be tested.
    Every conversation it was given is kept in `calls`, for assertions on what the agent sent.
    """

    def __init__(self, answers: Sequence[Any], *, name: str = "scripted") -> None:
        self.answers = [_answer_text(a, i) for i, a in enumerate(answers)]
        self.tool_calls = [_answer_call(a, i) for i, a in enumerate(answers)]
        self.name = name
        self.calls: list[list[Message]] = []
        self._lock = threading.Lock()

    @classmethod
    def from_spec(cls, spec: ModelSpec) -> ScriptedLLM:
        return cls(load_script(Path(spec.target).expanduser()), name=str(spec))

    @classmethod
    def from_file(cls, path: str | Path) -> ScriptedLLM:
        return cls(load_script(Path(path)), name=f"scripted:{path}")

    def complete(self, messages: Sequence[Message], *, temperature: float = 0.0, max_tokens: int = 512,
                 seed: int | None = None) -> Completion:
        start = time.monotonic()
        msgs = check_messages(messages)
        with self._lock:
            index = len(self.calls)
            if index >= len(self.answers):
                raise ScriptExhausted(f"{self.name} has {len(self.answers)} answer(s) and was asked for "
                                      f"answer {index + 1}: add answers to the script")
            self.calls.append(msgs)
        text, call = self.answers[index], self.tool_calls[index]
        calls = (call,) if call else ()
        return Completion(text=text, prompt_tokens=sum(len(m.content.split()) for m in msgs),
                          completion_tokens=len(text.split()) + (len(call.arguments.split()) if call else 0),
                          latency_s=time.monotonic() - start, model=self.name,
                          finish_reason="tool_calls" if call else "stop", tool_calls=calls)

    def complete_with_tools(self, messages: Sequence[Message], tools: Sequence[Tool], *, temperature: float = 0.0,
                            max_tokens: int = 512, seed: int | None = None) -> Completion:
        return self.complete(messages, temperature=temperature, max_tokens=max_tokens, seed=seed)

    def complete_json(self, messages: Sequence[Message], schema: dict[str, Any], *, temperature: float = 0.0,
                      max_tokens: int = 512, seed: int | None = None) -> Completion:
        """The next scripted answer as it is: a script holds what the model would say, schema or not."""
        return self.complete(messages, temperature=temperature, max_tokens=max_tokens, seed=seed)


class ScriptedScorer(ScriptedLLM):
    """A scripted model that also says how likely a text is: the value of the first of `likelihoods`' keys the text
    contains, else minus its word count (a shorter text is likelier, as with a real model). The texts it scored,
    after which prefix, are kept in `scored`."""

    def __init__(self, answers: Sequence[Any], *, likelihoods: Mapping[str, float] | None = None,
                 name: str = "scripted") -> None:
        super().__init__(answers, name=name)
        self.likelihoods = dict(likelihoods or {})
        self.scored: list[tuple[str, list[str]]] = []

    def logprobs(self, prefix: str, texts: Sequence[str]) -> list[float]:
        self.scored.append((prefix, list(texts)))
        return [next((v for k, v in self.likelihoods.items() if k in t), -float(len(t.split()))) for t in texts]


def load_script(path: Path) -> list[Any]:
    """A JSON or YAML list whose items are strings, {"text": ...} or {"tool_call": ...} mappings."""
    try:
        raw = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise BadModelSpec(f"cannot read the script {path}: {exc.strerror or exc}") from exc
    import yaml  # a core dependency; imported here so `import bot.llm` stays light

    try:
        # YAML is a superset of JSON, but json gives clearer errors for .json files.
        data = json.loads(raw) if path.suffix.lower() == ".json" else yaml.safe_load(raw)
    except (ValueError, yaml.YAMLError) as exc:
        raise BadModelSpec(f"the script {path} is not valid JSON/YAML: {exc}".replace("\n", " ")) from exc
    if not isinstance(data, list):
        raise BadModelSpec(f"the script {path} must hold a list of answers, not a {type(data).__name__}")
    try:
        for i, item in enumerate(data):  # checked here, so a bad script fails before the run starts
            _answer_text(item, i), _answer_call(item, i)
        return data
    except TypeError as exc:
        raise BadModelSpec(f"the script {path}: {exc}") from exc


def _answer_text(item: Any, index: int) -> str:
    if isinstance(item, str):
        return item
    if isinstance(item, dict) and isinstance(item.get("text"), str):
        return item["text"]
    if isinstance(item, dict) and "tool_call" in item:
        return ""
    raise TypeError(f"answer {index + 1} must be a string or a mapping with a string 'text' or a 'tool_call', "
                    f"not {item!r:.60}")


def _answer_call(item: Any, index: int) -> ToolCall | None:
    call = item.get("tool_call") if isinstance(item, dict) else None
    if call is None:
        return None
    if not isinstance(call, dict) or not isinstance(call.get("name"), str):
        raise TypeError(f"answer {index + 1}: a tool_call needs a string 'name', not {call!r:.60}")
    args = call.get("arguments", {})
    return ToolCall(f"call_{index + 1}", call["name"], args if isinstance(args, str) else json.dumps(args))
