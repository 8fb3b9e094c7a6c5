"""API keys for OpenAI-compatible servers: where they come from, and a pool that rotates them.

Several keys (comma-separated) spread a run over several rate limits. A key answered with 401 is
dropped for the rest of the process; a key answered with 429 rests until its Retry-After has passed.
"""
from __future__ import annotations

import ipaddress
import logging
import os
import threading
import time
from collections.abc import Callable, Mapping
from email.utils import parsedate_to_datetime
from urllib.parse import urlsplit

from bot.llm.errors import BadAPIKey, MissingAPIKey

log = logging.getLogger(__name__)

KEY_ENV = "OPENAI_API_KEY"
BASE_ENV = "OPENAI_BASE_URL"
# Local servers (llama.cpp, vLLM, Ollama) ignore the key but the SDK insists on one.
NO_KEY_PLACEHOLDER = "sk-no-key-needed-for-a-local-server"


def is_loopback(api_base: str | None) -> bool:
    host = urlsplit(api_base).hostname if api_base else None
    if not host:
        return False
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def resolve_keys(api_key: str | None, api_base: str | None, model: str) -> tuple[list[str], str]:
    """The keys to use and where they came from, for messages. A loopback server needs none."""
    source = "--api-key" if api_key else KEY_ENV
    raw = api_key if api_key else os.environ.get(KEY_ENV, "")
    keys = list(dict.fromkeys(k.strip() for k in raw.split(",") if k.strip()))  # dedupe, keep order
    if keys:
        return keys, source
    if is_loopback(api_base):
        return [NO_KEY_PLACEHOLDER], "none needed for a loopback server"
    where = api_base or "the OpenAI API"
    raise MissingAPIKey(f"openai:{model} at {where} needs an API key: set {KEY_ENV} (several keys, comma-separated, "
                        f"are rotated) or pass --api-key; a server on 127.0.0.1/localhost needs none")


class KeyPool:
    """Round-robin over the keys that still work, skipping the ones resting after a 429. Thread-safe."""

    def __init__(self, keys: list[str], *, source: str = KEY_ENV, clock: Callable[[], float] = time.monotonic):
        self._keys = list(keys)
        self._rest_until: dict[str, float] = {}
        self._next = 0
        self._source = source
        self._clock = clock
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._keys)

    def take(self) -> str:
        """The next usable key; raises BadAPIKey once every key has been dropped."""
        with self._lock:
            if not self._keys:
                raise BadAPIKey(f"every API key (from {self._source}) was rejected by the server (HTTP 401): "
                                f"check {KEY_ENV} or --api-key")
            now = self._clock()
            n = len(self._keys)
            order = [self._keys[(self._next + i) % n] for i in range(n)]
            ready = [k for k in order if self._rest_until.get(k, 0.0) <= now]
            # If every key rests, hand out the one that wakes first; the caller waits `wait_s()` before using it.
            key = ready[0] if ready else min(order, key=lambda k: self._rest_until[k])
            self._next = (self._keys.index(key) + 1) % n
            return key

    def wait_s(self) -> float:
        """Seconds until some key may be used again (0 when one is ready now)."""
        with self._lock:
            if not self._keys:
                return 0.0
            now = self._clock()
            return max(0.0, min(self._rest_until.get(k, 0.0) for k in self._keys) - now)

    def drop(self, key: str, status: int) -> None:
        with self._lock:
            if key in self._keys:
                self._keys.remove(key)
                self._rest_until.pop(key, None)
                self._next = self._next % len(self._keys) if self._keys else 0
                log.warning("API key %s was rejected (HTTP %d) and is dropped; %d key(s) left",
                            redact(key), status, len(self._keys))

    def rest(self, key: str, seconds: float) -> None:
        with self._lock:
            if key in self._keys:
                self._rest_until[key] = self._clock() + max(0.0, seconds)


def redact(key: str) -> str:
    """Enough of a key to tell two apart in a log, never enough to use it."""
    return f"…{key[-4:]}" if len(key) > 8 else "…"


def retry_after_s(headers: Mapping[str, str] | None) -> float | None:
    """Seconds the server asked us to wait: retry-after-ms (OpenAI), or Retry-After as seconds or an HTTP date."""
    if not headers:
        return None
    try:
        if (ms := headers.get("retry-after-ms")) is not None:
            return max(0.0, float(ms) / 1000)
    except ValueError:
        pass
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        return max(0.0, parsedate_to_datetime(value).timestamp() - time.time())
    except (TypeError, ValueError):
        return None
