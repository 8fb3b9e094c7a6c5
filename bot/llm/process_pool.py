"""One in-process model per worker, each in a process of its own, so `fixbot eval --workers N` runs N tasks
at once with a local model.

Why processes: a `Llama` object answers one call at a time, and two of them in threads of one process can end
that process silently mid-generation. Why it pays: llama.cpp's threads do not scale linearly, so one process per
core generates more tokens in all, and one worker's sandbox runs overlap the other's model call.

Each worker thread keeps the same process for all its calls, so llama.cpp's cached prompt prefix of a task
is reused from one iteration to the next.
"""
from __future__ import annotations

import multiprocessing
import signal
import threading
from collections.abc import Sequence
from multiprocessing.connection import Connection
from typing import Any

from bot.llm.errors import LLMError, LLMRequestFailed, ScoringUnsupported, ToolsUnsupported
from bot.llm.types import Completion, Message, Tool


def _serve(spec: str, options: dict[str, Any], conn: Connection) -> None:
    """The child: open the model, say whether that worked, then answer (method, args, kwargs) requests until
    told to stop."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle; it closes us
    from bot.llm.registry import open_llm

    try:
        llm = open_llm(spec, **options)
    except Exception as exc:
        conn.send(("error", exc))
        return
    conn.send(("ok", None))
    while True:
        try:
            request = conn.recv()
        except EOFError:
            break
        if request is None:
            break
        method, args, kwargs = request
        try:
            conn.send(("ok", getattr(llm, method)(*args, **kwargs)))
        except Exception as exc:
            conn.send(("error", exc))
    close = getattr(llm, "close", None)
    if close:
        close()


class _Child:
    def __init__(self, spec: str, options: dict[str, Any]) -> None:
        ctx = multiprocessing.get_context("spawn")  # never fork a process that may hold threads or a model
        self._conn, theirs = ctx.Pipe()
        self._process = ctx.Process(target=_serve, args=(spec, options, theirs), daemon=True)
        self._process.start()
        theirs.close()

    def _ended(self) -> LLMRequestFailed:
        return LLMRequestFailed(f"a model worker process ended (exit code {self._process.exitcode})")

    def answer(self) -> Any:
        try:
            status, value = self._conn.recv()
        except (EOFError, OSError):
            raise self._ended() from None
        if status == "error":
            raise value
        return value

    def call(self, method: str, *args: Any, **kwargs: Any) -> Any:
        try:
            self._conn.send((method, args, kwargs))
        except OSError:
            raise self._ended() from None
        return self.answer()

    def close(self) -> None:
        try:
            self._conn.send(None)
        except OSError:
            pass
        self._process.join(timeout=5)  # a child busy generating is not waited for: Ctrl-C must end the run
        if self._process.is_alive():
            self._process.terminate()
            self._process.join(timeout=5)
        self._conn.close()


class ModelPool:
    """`size` copies of the model `spec`, each in its own process; a calling thread keeps one copy for good.

    There must be no more calling threads than copies (eval's thread pool has exactly `size` threads)."""

    def __init__(self, spec: str, size: int, **options: Any) -> None:
        if size < 1:
            raise ValueError("a model pool needs at least one process")
        self.name = spec
        self._children = [_Child(spec, options) for _ in range(size)]  # they load at the same time
        try:
            for child in self._children:
                child.answer()  # loaded, or the reason it could not be, as open_llm would have raised it
        except BaseException:
            self.close()
            raise
        self._free = list(self._children)
        self._lock = threading.Lock()
        self._local = threading.local()

    def _mine(self) -> _Child:
        child = getattr(self._local, "child", None)
        if child is None:
            with self._lock:
                if not self._free:
                    raise LLMError(f"more threads than the {len(self._children)} model processes of {self.name}")
                child = self._local.child = self._free.pop()
        return child

    def complete(self, messages: Sequence[Message], *, temperature: float = 0.0, max_tokens: int = 512,
                 seed: int | None = None) -> Completion:
        return self._mine().call("complete", list(messages), temperature=temperature, max_tokens=max_tokens,
                                 seed=seed)

    def complete_many(self, messages: Sequence[Message], *, temperatures: Sequence[float], seeds: Sequence[int],
                      max_tokens: int = 512) -> list[Completion]:
        try:
            return self._mine().call("complete_many", list(messages), temperatures=list(temperatures),
                                     seeds=list(seeds), max_tokens=max_tokens)
        except AttributeError:  # a backend without it: one answer after another
            return [self.complete(messages, temperature=t, max_tokens=max_tokens, seed=s)
                    for t, s in zip(temperatures, seeds)]

    def complete_with_tools(self, messages: Sequence[Message], tools: Sequence[Tool], *, temperature: float = 0.0,
                            max_tokens: int = 512, seed: int | None = None) -> Completion:
        try:
            return self._mine().call("complete_with_tools", list(messages), list(tools), temperature=temperature,
                                     max_tokens=max_tokens, seed=seed)
        except AttributeError:
            raise ToolsUnsupported(f"{self.name} cannot call tools") from None

    def complete_json(self, messages: Sequence[Message], schema: dict[str, Any], *, temperature: float = 0.0,
                      max_tokens: int = 512, seed: int | None = None) -> Completion:
        try:
            return self._mine().call("complete_json", list(messages), schema, temperature=temperature,
                                     max_tokens=max_tokens, seed=seed)
        except AttributeError:  # a backend without it: the answer is parsed either way
            return self.complete(messages, temperature=temperature, max_tokens=max_tokens, seed=seed)

    def logprobs(self, prefix: str, texts: Sequence[str]) -> list[float]:
        try:
            return self._mine().call("logprobs", prefix, list(texts))
        except AttributeError:
            raise ScoringUnsupported(f"{self.name} cannot score texts") from None

    def close(self) -> None:
        for child in self._children:
            child.close()

    def __enter__(self) -> ModelPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
