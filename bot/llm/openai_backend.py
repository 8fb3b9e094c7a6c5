"""Any OpenAI-compatible chat server: OpenAI, Together, vLLM, llama.cpp's server, Ollama.

The SDK's own retries are off (max_retries=0) because they know nothing of our key pool: we retry
with tenacity so a 429 can move to the next key instead of sleeping, and a 401 drops a key.
"""
from __future__ import annotations

import logging
import os
import random
import re
import time
from collections.abc import Sequence
from typing import Any, NoReturn

from tenacity import RetryCallState, Retrying, retry_if_exception_type

from bot.llm.errors import LLMRequestFailed, ModelUnavailable, PromptTooLong
from bot.llm.keys import BASE_ENV, KeyPool, resolve_keys, retry_after_s
from bot.llm.spec import ModelSpec
from bot.llm.types import Completion, Message, Tool, ToolCall, check_messages

log = logging.getLogger(__name__)
# The statuses worth another try, as the OpenAI SDK itself judges them.
TRANSIENT_STATUS = frozenset({408, 409, 429}) | frozenset(range(500, 600))
# how servers refuse a prompt longer than the model's context (OpenAI's code, vLLM's and llama.cpp server's words)
TOO_LONG = re.compile(r"context_length_exceeded|maximum context length|exceeds? the available context|context window",
                      re.I)


class _Transient(Exception):
    """One failed attempt that another attempt may fix. Internal: callers only see LLMError."""

    def __init__(self, reason: str, *, retry_after: float | None = None, key_dropped: bool = False,
                 rate_limited: bool = False) -> None:
        super().__init__(reason)
        self.reason = reason
        self.retry_after = retry_after
        self.key_dropped = key_dropped  # a 401: the next key is tried at once, and it costs no retry
        self.rate_limited = rate_limited  # a 429: the key rests; the next attempt waits only if all keys rest


class OpenAILLM:
    def __init__(self, model: str, *, api_base: str | None = None, api_key: str | None = None,
                 timeout_s: float = 120.0, max_retries: int = 5, backoff_s: float = 1.0,
                 max_backoff_s: float = 30.0, max_wait_s: float = 120.0) -> None:
        """`max_retries` counts retries after the first attempt; backoff doubles from `backoff_s` up to
        `max_backoff_s`, plus jitter; a server's Retry-After is honoured up to `max_wait_s`, so a stray
        `Retry-After: 3600` cannot park a run for an hour."""
        import openai  # lazy: `import bot.llm` must stay light

        self.model = model
        self.api_base = api_base or os.environ.get(BASE_ENV) or None
        keys, source = resolve_keys(api_key, self.api_base, model)
        self.name = f"openai:{model}"
        self.timeout_s, self.max_retries, self.max_wait_s = timeout_s, max_retries, max_wait_s
        self.backoff_s, self.max_backoff_s = backoff_s, max_backoff_s
        self._pool = KeyPool(keys, source=source)
        self._openai = openai
        self._base_client = openai.OpenAI(api_key=keys[0], base_url=self.api_base, max_retries=0, timeout=timeout_s)
        self._clients: dict[str, Any] = {}

    @classmethod
    def from_spec(cls, spec: ModelSpec, *, api_base: str | None = None, api_key: str | None = None,
                  timeout_s: float = 120.0, max_retries: int = 5) -> OpenAILLM:
        return cls(spec.target, api_base=api_base, api_key=api_key, timeout_s=timeout_s, max_retries=max_retries)

    @property
    def where(self) -> str:
        return self.api_base or "the OpenAI API"

    def complete(self, messages: Sequence[Message], *, temperature: float = 0.0, max_tokens: int = 512,
                 seed: int | None = None) -> Completion:
        return self._complete(self._payload(messages, temperature, max_tokens, seed))

    def complete_with_tools(self, messages: Sequence[Message], tools: Sequence[Tool], *, temperature: float = 0.0,
                            max_tokens: int = 512, seed: int | None = None) -> Completion:
        # "auto", not "required": every server with tools takes "auto"; a text answer is the caller's to handle
        payload = self._payload(messages, temperature, max_tokens, seed)
        payload.update(tools=[t.to_dict() for t in tools], tool_choice="auto")
        return self._complete(payload)

    def _payload(self, messages: Sequence[Message], temperature: float, max_tokens: int,
                 seed: int | None) -> dict[str, Any]:
        payload: dict[str, Any] = {"model": self.model, "messages": [m.to_dict() for m in check_messages(messages)],
                                   "temperature": temperature, "max_tokens": max_tokens}
        if seed is not None:
            payload["seed"] = seed
        return payload

    def _complete(self, payload: dict[str, Any]) -> Completion:
        start = time.monotonic()
        counted = 0  # failed attempts that use up a retry (a dropped key does not)

        def stop(state: RetryCallState) -> bool:
            nonlocal counted
            if not _exc(state).key_dropped:
                counted += 1
            return counted > self.max_retries

        retrying = Retrying(stop=stop, wait=self._wait, retry=retry_if_exception_type(_Transient),
                            before_sleep=self._log_retry, reraise=True)
        try:
            for attempt in retrying:
                with attempt:
                    resp = self._attempt(payload, attempt.retry_state.attempt_number)
        except _Transient as exc:
            raise LLMRequestFailed(f"{self.name} at {self.where} failed after "
                                   f"{attempt.retry_state.attempt_number} attempt(s): {exc.reason}") from exc
        choice = resp.choices[0]
        usage = resp.usage
        calls = tuple(ToolCall(c.id, c.function.name, c.function.arguments or "")
                      for c in choice.message.tool_calls or () if getattr(c, "function", None) is not None)
        details = getattr(usage, "prompt_tokens_details", None)  # servers that cache prompts say how much
        return Completion(text=choice.message.content or "", prompt_tokens=getattr(usage, "prompt_tokens", 0) or 0,
                          completion_tokens=getattr(usage, "completion_tokens", 0) or 0,
                          cached_tokens=getattr(details, "cached_tokens", 0) or 0,
                          latency_s=time.monotonic() - start, model=self.name, finish_reason=choice.finish_reason,
                          attempts=attempt.retry_state.attempt_number, tool_calls=calls)

    def _attempt(self, payload: dict[str, Any], attempt_number: int) -> Any:
        if (wait := self._pool.wait_s()) > 0:  # every key is resting after a 429
            time.sleep(min(wait, self.max_wait_s))
        key = self._pool.take()
        oa = self._openai
        try:
            resp = self._client(key).chat.completions.create(**payload)
        except oa.APITimeoutError as exc:
            raise _Transient(f"no answer within the {self.timeout_s:g} s timeout") from exc
        except oa.APIConnectionError as exc:
            cause = exc.__cause__ or exc
            raise _Transient(f"could not connect to {self.where} ({type(cause).__name__}: {cause})") from exc
        except oa.APIStatusError as exc:
            self._raise_for_status(exc, key, attempt_number)
        except (oa.APIResponseValidationError, ValueError) as exc:  # invalid JSON arrives as a ValueError
            raise _Transient(f"malformed response from {self.where} ({type(exc).__name__}: {exc})") from exc
        if not isinstance(resp, oa.types.chat.ChatCompletion):  # the SDK hands back text for non-JSON replies
            raise _Transient(f"malformed response from {self.where}: not a chat completion: {str(resp)[:120]!r}")
        if not resp.choices or resp.choices[0].message is None:
            raise _Transient(f"{self.where} answered with no choices")
        return resp

    def _raise_for_status(self, exc: Any, key: str, attempt_number: int) -> NoReturn:
        status = exc.status_code
        headers = exc.response.headers if exc.response is not None else None
        detail = _detail(exc)
        if status == 401:
            self._pool.drop(key, status)
            raise _Transient(f"HTTP 401 {detail}", key_dropped=True) from exc
        if status == 429:
            after = retry_after_s(headers)
            # Without Retry-After the key rests as long as a backoff would have waited.
            rest = after if after is not None else self._backoff_s(attempt_number)
            self._pool.rest(key, min(rest, self.max_wait_s))
            raise _Transient(f"HTTP 429 rate limited {detail}", retry_after=after, rate_limited=True) from exc
        if status in TRANSIENT_STATUS:
            raise _Transient(f"HTTP {status} {detail}", retry_after=retry_after_s(headers)) from exc
        if status == 404:
            raise ModelUnavailable(f"{self.where} does not serve model {self.model!r} (HTTP 404 {detail}); check "
                                   f"the name after 'openai:' and the api base") from exc
        error = PromptTooLong if status == 400 and TOO_LONG.search(detail) else LLMRequestFailed
        raise error(f"{self.name} at {self.where} refused the request: HTTP {status} {detail}") from exc

    def _wait(self, state: RetryCallState) -> float:
        exc = _exc(state)
        if exc.key_dropped or exc.rate_limited:
            return 0.0  # the next attempt takes another key, or waits for the pool itself
        return min(max(exc.retry_after or 0.0, self._backoff_s(state.attempt_number)), self.max_wait_s)

    def _backoff_s(self, attempt_number: int) -> float:
        # Exponential with additive jitter, so clients that failed together do not retry together.
        return min(self.max_backoff_s, self.backoff_s * 2 ** (attempt_number - 1)) + random.uniform(0, self.backoff_s)

    def _log_retry(self, state: RetryCallState) -> None:
        exc = _exc(state)
        delay = state.next_action.sleep if state.next_action else 0.0
        log.warning("%s attempt %d failed: %s; retrying in %.1f s", self.name, state.attempt_number, exc.reason, delay)

    def _client(self, key: str) -> Any:
        if key not in self._clients:
            self._clients[key] = self._base_client.with_options(api_key=key)
        return self._clients[key]

    def close(self) -> None:
        self._base_client.close()


def _exc(state: RetryCallState) -> _Transient:
    exc = state.outcome.exception() if state.outcome else None
    assert isinstance(exc, _Transient)  # retry_if_exception_type guarantees it
    return exc


def _detail(exc: Any) -> str:
    """The server's own words, on one line and short."""
    body = getattr(exc, "body", None)
    message = body.get("message") if isinstance(body, dict) else None
    if message is None and isinstance(body, dict) and isinstance(body.get("error"), dict):
        message = body["error"].get("message")
    text = str(message if message is not None else getattr(exc, "message", "") or "")
    text = " ".join(text.split())
    return f"({text[:200]})" if text else ""
