"""LLM backends behind one protocol, chosen by a model spec string (see `spec.py`).

Importing this package is cheap and has no side effects: openai, llama_cpp, torch and transformers are
imported only when a backend that needs them is opened.
"""
from __future__ import annotations

from bot.llm.bundled import bundled_model_path, cache_dir, ensure_bundled_model
from bot.llm.errors import (
                     BadAPIKey,
                     BadModelSpec,
                     LLMError,
                     LLMRequestFailed,
                     MissingAPIKey,
                     ModelUnavailable,
                     ScoringUnsupported,
                     ScriptExhausted,
                     ToolsUnsupported,
)
from bot.llm.registry import open_llm
from bot.llm.scripted import ScriptedLLM
from bot.llm.spec import DEFAULT_MODEL, ModelSpec, parse_model_spec
from bot.llm.types import LLM, Completion, JsonLLM, Message, ScoringLLM, Tool, ToolCall, ToolLLM

__all__ = ["BadAPIKey", "BadModelSpec", "Completion", "DEFAULT_MODEL", "JsonLLM", "LLM", "LLMError", "LLMRequestFailed",
           "Message", "MissingAPIKey", "ModelSpec", "ModelUnavailable", "ScoringLLM", "ScoringUnsupported",
           "ScriptExhausted", "ScriptedLLM", "Tool", "ToolCall", "ToolLLM", "ToolsUnsupported", "bundled_model_path",
           "cache_dir", "ensure_bundled_model", "open_llm", "parse_model_spec"]
