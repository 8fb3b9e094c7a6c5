"""In-process GGUF inference with llama-cpp-python; `llamacpp:bundled` is fixbot's default model."""
from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from bot.llm.bundled import LOCAL_EXTRA
from bot.llm.chatml_tools import render, render_chat
from bot.llm.errors import LLMRequestFailed, ModelUnavailable, PromptTooLong
from bot.llm.gguf_files import check_gguf, resolve_gguf
from bot.llm.llamacpp_parallel import MAX_SEQUENCES, allow_sequences, decode_together, evaluate_prompt
from bot.llm.llamacpp_score import text_logprobs
from bot.llm.spec import ModelSpec
from bot.llm.types import Completion, Message, Tool, ToolCall, check_messages


def available_cores() -> int:
    # sched_getaffinity honours taskset/cgroup CPU pinning, where os.cpu_count() reports the whole host.
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


class LlamaCppLLM:
    """One `Llama` object per instance, kept for the whole run.

    Keeping the object is what reuses the shared prompt prefix: llama.cpp keeps the KV cache of the
    last prompt and re-evaluates only the tokens after the longest common prefix. Measured here on the
    bundled model (2 cores): a 236-token prompt took 2.8 s cold and 0.28 s when only the last user
    message changed. llama-cpp-python's LlamaRAMCache gave no further gain for our sequential calls
    (it saves a state after every call, and restoring it did not beat re-evaluation), so it is not used.
    """

    def __init__(self, model_path: str | Path, *, n_ctx: int = 4096, n_threads: int | None = None,
                 name: str | None = None, verbose: bool = False) -> None:
        path = Path(model_path)
        check_gguf(path)
        try:
            from llama_cpp import Llama
        except ImportError:
            raise ModelUnavailable(f"llamacpp: models need llama-cpp-python: pip install '{LOCAL_EXTRA}'") from None
        except (RuntimeError, OSError) as exc:  # installed, but its native library does not load here
            raise ModelUnavailable(f"llama-cpp-python is installed but cannot load: {exc}") from None
        threads = n_threads or available_cores()
        self.name = name or f"llamacpp:{path}"
        self.path = path
        self._lock = threading.Lock()  # a Llama object is not safe to use from two threads at once
        try:
            self._llama = Llama(model_path=str(path), n_ctx=n_ctx, n_threads=threads, n_threads_batch=threads,
                                verbose=verbose)
            allow_sequences(self._llama, MAX_SEQUENCES)
        except (ValueError, RuntimeError) as exc:  # llama-cpp-python's ways of saying "failed to load"
            raise ModelUnavailable(f"llama.cpp could not load {path}: {exc}") from exc
        # The answers of complete_many are rendered as ChatML by fixbot (the bundled Qwen model's format);
        # a model with another chat format gets them one after another.
        self._chatml = "<|im_start|>" in self._llama.metadata.get("tokenizer.chat_template", "")

    @classmethod
    def from_spec(cls, spec: ModelSpec, *, n_ctx: int = 4096, n_threads: int | None = None,
                  progress: bool = True, verbose: bool = False) -> LlamaCppLLM:
        return cls(resolve_gguf(spec, progress=progress), n_ctx=n_ctx, n_threads=n_threads, name=str(spec),
                   verbose=verbose)

    @property
    def n_ctx(self) -> int:
        return self._llama.n_ctx()

    def complete(self, messages: Sequence[Message], *, temperature: float = 0.0, max_tokens: int = 512,
                 seed: int | None = None) -> Completion:
        return self._chat(messages, temperature=temperature, max_tokens=max_tokens, seed=seed)

    def complete_json(self, messages: Sequence[Message], schema: dict[str, Any], *, temperature: float = 0.0,
                      max_tokens: int = 512, seed: int | None = None) -> Completion:
        """Sampled under a grammar that llama-cpp-python makes from `schema`: only JSON it admits can come out."""
        return self._chat(messages, temperature=temperature, max_tokens=max_tokens, seed=seed,
                          response_format={"type": "json_object", "schema": schema})

    def _chat(self, messages: Sequence[Message], **options: Any) -> Completion:
        msgs = [m.to_dict() for m in check_messages(messages)]
        start = time.monotonic()
        out, evaluated, prompt_s = self._generate(lambda: self._llama.create_chat_completion(messages=msgs, **options))
        choice = out["choices"][0]
        usage = out.get("usage") or {}
        prompt_tokens = usage.get("prompt_tokens", 0)
        return Completion(text=choice["message"].get("content") or "", prompt_tokens=prompt_tokens,
                          completion_tokens=usage.get("completion_tokens", 0), latency_s=time.monotonic() - start,
                          model=self.name, finish_reason=choice.get("finish_reason"),
                          cached_tokens=max(prompt_tokens - evaluated, 0), prompt_eval_s=prompt_s)

    def complete_many(self, messages: Sequence[Message], *, temperatures: Sequence[float], seeds: Sequence[int],
                      max_tokens: int = 512) -> list[Completion]:
        """One answer per (temperature, seed), decoded together (bot/llm/llamacpp_parallel.py). The first answer
        carries the prompt's evaluation; the decoding time is shared among the answers by their lengths."""
        msgs = check_messages(messages)
        plain = msgs[0].role == "system" and all(m.role in ("system", "user", "assistant") for m in msgs)
        if not self._chatml or not plain or len(temperatures) < 2:
            return self._one_by_one(msgs, temperatures, seeds, max_tokens)
        out: list[Completion] = []
        for i in range(0, len(temperatures), MAX_SEQUENCES):
            out += self._together(msgs, temperatures[i:i + MAX_SEQUENCES], seeds[i:i + MAX_SEQUENCES], max_tokens)
        return out

    def _one_by_one(self, messages: list[Message], temperatures: Sequence[float], seeds: Sequence[int],
                    max_tokens: int) -> list[Completion]:
        return [self.complete(messages, temperature=t, max_tokens=max_tokens, seed=s)
                for t, s in zip(temperatures, seeds)]

    def _together(self, messages: list[Message], temperatures: Sequence[float], seeds: Sequence[int],
                  max_tokens: int) -> list[Completion]:
        import llama_cpp

        prompt = self._llama.tokenize(render_chat(messages).encode(), add_bos=False, special=True)
        if len(prompt) + len(temperatures) * max_tokens > self.n_ctx:  # each answer needs KV cells of its own
            return self._one_by_one(messages, temperatures, seeds, max_tokens)
        start = time.monotonic()
        with self._lock:
            before = llama_cpp.llama_perf_context(self._llama.ctx)
            evaluate_prompt(self._llama, prompt)
            llama_cpp.llama_synchronize(self._llama.ctx)  # llama.cpp updates its counters when it synchronizes
            after = llama_cpp.llama_perf_context(self._llama.ctx)
            answers, decode_s = decode_together(self._llama, prompt, temperatures, seeds, max_tokens)
        evaluated = int(after.n_p_eval - before.n_p_eval)
        prompt_s = max(after.t_p_eval_ms - before.t_p_eval_ms, 0.0) / 1000
        total = time.monotonic() - start
        generated = sum(len(a.tokens) for a in answers) or 1
        return [Completion(text=self._llama.detokenize(a.tokens).decode("utf-8", errors="ignore"),
                           prompt_tokens=len(prompt), completion_tokens=len(a.tokens),
                           latency_s=(total - decode_s if k == 0 else 0.0) + decode_s * len(a.tokens) / generated,
                           model=self.name, finish_reason="stop" if a.finished else "length",
                           cached_tokens=len(prompt) - evaluated if k == 0 else len(prompt),
                           prompt_eval_s=prompt_s if k == 0 else 0.0)
                for k, a in enumerate(answers)]

    def complete_with_tools(self, messages: Sequence[Message], tools: Sequence[Tool], *, temperature: float = 0.0,
                            max_tokens: int = 512, seed: int | None = None) -> Completion:
        """In llama-cpp-python's `chatml-function-calling` format (Qwen's chat format is ChatML), rendered by
        bot/llm/chatml_tools.py because the library's handler HTML-escapes every message. The first tool's call is
        required and its arguments are constrained by a grammar made from the tool's JSON Schema, as that
        handler does for a named tool (its automatic choice cannot write a plain message)."""
        from llama_cpp.llama_grammar import LlamaGrammar

        tool = tools[0]
        prompt = render(check_messages(messages), tools, tool.name)
        start = time.monotonic()
        out, evaluated, prompt_s = self._generate(lambda: self._llama.create_completion(
            prompt=prompt, temperature=temperature, max_tokens=max_tokens, stop=["<|im_end|>"],
            grammar=LlamaGrammar.from_json_schema(json.dumps(tool.parameters), verbose=False), seed=seed))
        choice = out["choices"][0]
        usage = out.get("usage") or {}
        prompt_tokens = usage.get("prompt_tokens", 0)
        call = ToolCall(f"call_{out.get('id', '')}", tool.name, choice["text"])
        return Completion(text="", prompt_tokens=prompt_tokens,
                          completion_tokens=usage.get("completion_tokens", 0), latency_s=time.monotonic() - start,
                          model=self.name, finish_reason="tool_calls", tool_calls=(call,),
                          cached_tokens=max(prompt_tokens - evaluated, 0), prompt_eval_s=prompt_s)

    def logprobs(self, prefix: str, texts: Sequence[str]) -> list[float]:
        """Per text, the sum of its tokens' log-probabilities after `prefix` (bot/llm/llamacpp_score.py). Prefix
        and texts are tokenized apart, so a token never spans the border between them."""
        if not prefix:
            raise ValueError("logprobs() needs a prefix: the first token's probability is read after it")
        tokenized = [self._tokens(text) for text in texts]
        with self._lock:
            return text_logprobs(self._llama, self._tokens(prefix), tokenized)

    def count_tokens(self, text: str) -> int:
        return len(self._tokens(text))

    def _tokens(self, text: str) -> list[int]:
        return self._llama.tokenize(text.encode(), add_bos=False)

    def _generate(self, call: Callable[[], Any]) -> tuple[Any, int, float]:
        """Run one llama-cpp-python call under the lock; return its output, how many prompt tokens llama.cpp
        evaluated for it (what the cached prefix did not cover) and the seconds that took, from its perf counters'
        running totals (the count holds on a busy machine, the time is the machine's)."""
        import llama_cpp

        with self._lock:
            before = llama_cpp.llama_perf_context(self._llama.ctx)
            try:
                out = call()
            except ValueError as exc:  # e.g. "Requested tokens (5000) exceed context window of 4096"
                error = PromptTooLong if "context window" in str(exc) else LLMRequestFailed
                raise error(f"{self.name}: {exc}; shorten the prompt or raise n_ctx") from exc
            after = llama_cpp.llama_perf_context(self._llama.ctx)
            return out, int(after.n_p_eval - before.n_p_eval), max(after.t_p_eval_ms - before.t_p_eval_ms, 0.0) / 1000

    def reset(self) -> None:
        """Forget the cached prefix, so the next call evaluates its whole prompt (benchmarks use this)."""
        with self._lock:
            self._llama.reset()

    def close(self) -> None:
        with self._lock:
            llama, self._llama = getattr(self, "_llama", None), None
        if llama is not None:
            llama.close()

    def __enter__(self) -> LlamaCppLLM:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

