"""The prompt of llama-cpp-python's `chatml-function-calling` format, rendered without HTML escaping.

llama-cpp-python's own handler renders its template with Jinja's HTML autoescape on, so every message reaches
the model escaped: `def f(x) -> int:` arrives as `def f(x) -&gt; int:`, `"a"` as `&#34;a&#34;`. The bundled
model then copies the escaped text into its next call's code, which no longer parses ("line 1: expected ':'").
This renders the same format as plain text:

    <|im_start|>system            the system prompt, then the functions and their JSON Schemas
    <|im_start|>user              the user's turns, and tool results (the format has no tool role)
    <|im_start|>assistant         earlier calls as `functions.NAME:` + the arguments' JSON

and ends with `functions.NAME:` of the required tool, so the model writes only the arguments (constrained by
a grammar made from the tool's JSON Schema, in the backend).
"""
from __future__ import annotations

import json
from collections.abc import Sequence

from bot.llm.types import Message, Tool


def _functions(tools: Sequence[Tool]) -> str:
    listed = "".join(f"\nfunctions.{t.name}:\n{t.description}\n{json.dumps(t.parameters)}\n" for t in tools)
    return (f"\n\nYou have access to the following functions:\n{listed}\n"
            "To call a function, answer in this format:\n\nfunctions.<function_name>:\n"
            '{ "arg1": "value1", "arg2": "value2" }')


def _turn(role: str, text: str) -> str:
    return f"<|im_start|>{role}\n{text}<|im_end|>\n"


def render_chat(messages: Sequence[Message]) -> str:
    """A plain conversation as the bundled model's chat template renders it, up to the assistant's answer."""
    return "".join(_turn(m.role, m.content) for m in messages) + "<|im_start|>assistant\n"


def render(messages: Sequence[Message], tools: Sequence[Tool], call: str) -> str:
    """The whole prompt, up to the start of the required call's arguments."""
    out = [] if any(m.role == "system" for m in messages) else [_turn("system", _functions(tools).lstrip())]
    for m in messages:
        if m.role == "system":
            out.append(_turn("system", m.content + _functions(tools)))
        elif m.role == "assistant":
            calls = "".join(f"functions.{c.name}:\n{c.arguments}" for c in m.tool_calls)
            out.append(_turn("assistant", calls or m.content))
        elif m.role == "tool":
            out.append(_turn("user", f"Result of the call:\n{m.content}"))
        else:
            out.append(_turn("user", m.content))
    return "".join(out) + f"<|im_start|>assistant\nfunctions.{call}:\n"
