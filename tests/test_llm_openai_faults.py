"""The openai: backend against a loopback server that misbehaves on purpose.

Every fault is scripted per request; timeouts and backoffs are tiny, so the whole file runs in seconds
and nothing can hang (the server's own waits are bounded and released at teardown).
"""
from __future__ import annotations

import json
import logging
import socket
import threading
import time
from collections.abc import Callable, Iterator
from email.utils import formatdate
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from bot.llm import BadAPIKey, LLMRequestFailed, Message, ModelUnavailable
from bot.llm.errors import PromptTooLong
from bot.llm.keys import KeyPool, retry_after_s
from bot.llm.openai_backend import OpenAILLM

ASK = [Message("system", "be brief"), Message("user", "say hi")]
Reply = tuple[int, dict[str, str], bytes]  # status, headers, body
Behaviour = Callable[[str], "Reply | str"]  # gets the Authorization header; "hang" means never answer


def ok(text: str = "hi", prompt_tokens: int = 7, completion_tokens: int = 2,
       cached_tokens: int | None = None) -> Behaviour:
    usage: dict = {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                   "total_tokens": prompt_tokens + completion_tokens}
    if cached_tokens is not None:
        usage["prompt_tokens_details"] = {"cached_tokens": cached_tokens}
    body = {"id": "c1", "object": "chat.completion", "created": 0, "model": "m",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
            "usage": usage}
    return lambda auth: (200, {"Content-Type": "application/json"}, json.dumps(body).encode())


def status(code: int, message: str = "boom", **headers: str) -> Behaviour:
    body = json.dumps({"error": {"message": message, "type": "test"}}).encode()
    return lambda auth: (code, {"Content-Type": "application/json", **headers}, body)


def raw(body: bytes, content_type: str = "application/json") -> Behaviour:
    return lambda auth: (200, {"Content-Type": content_type}, body)


def hang(auth: str) -> str:
    return "hang"


class FaultServer:
    """A chat-completions endpoint on 127.0.0.1 that plays `script` one request at a time."""

    def __init__(self) -> None:
        self.script: list[Behaviour] = []
        self.default: Behaviour = ok()
        self.seen: list[dict[str, Any]] = []
        self.release = threading.Event()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                auth = self.headers.get("Authorization", "")
                server.seen.append({"path": self.path, "auth": auth, "body": body, "t": time.monotonic()})
                behaviour = server.script.pop(0) if server.script else server.default
                reply = behaviour(auth)
                if reply == "hang":
                    server.release.wait(10)  # bounded: the client's timeout is far shorter
                    return
                code, headers, payload = reply  # type: ignore[misc]
                self.send_response(code)
                for k, v in {**headers, "Content-Length": str(len(payload))}.items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, *args: Any) -> None:  # keep test output clean
                pass

        class Server(ThreadingHTTPServer):
            daemon_threads = True

            def handle_error(self, request: Any, client_address: Any) -> None:
                pass  # a client that timed out and hung up is expected here

        self.httpd = Server(("127.0.0.1", 0), Handler)
        self.base = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05},
                                       daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.release.set()
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(timeout=5)

    @property
    def keys_seen(self) -> list[str]:
        return [s["auth"].removeprefix("Bearer ") for s in self.seen]


@pytest.fixture
def server() -> Iterator[FaultServer]:
    s = FaultServer()
    try:
        yield s
    finally:
        s.close()


def llm(server: FaultServer, *, keys: str = "sk-test-0001", **options: Any) -> OpenAILLM:
    fast = {"timeout_s": 0.5, "max_retries": 3, "backoff_s": 0.01, "max_backoff_s": 0.05, "max_wait_s": 5.0}
    return OpenAILLM("test-model", api_base=server.base, api_key=keys, **{**fast, **options})


def test_a_good_answer_records_text_usage_latency_and_the_request(server: FaultServer) -> None:
    server.script = [ok("hello there", 11, 3)]
    c = llm(server).complete(ASK, temperature=0.3, max_tokens=20, seed=42)
    assert (c.text, c.prompt_tokens, c.completion_tokens, c.finish_reason, c.attempts) == ("hello there", 11, 3,
                                                                                          "stop", 1)
    assert 0 < c.latency_s < 5 and c.model == "openai:test-model" and c.cached_tokens == 0
    (req,) = server.seen
    assert req["path"] == "/v1/chat/completions"
    assert req["body"] == {"model": "test-model", "temperature": 0.3, "max_tokens": 20, "seed": 42,
                           "messages": [{"role": "system", "content": "be brief"},
                                        {"role": "user", "content": "say hi"}]}


def test_prompt_tokens_the_server_reused_from_its_cache_are_recorded(server: FaultServer) -> None:
    server.script = [ok("hello", 300, 3, cached_tokens=256)]
    c = llm(server).complete(ASK, temperature=0.0, max_tokens=20)
    assert (c.prompt_tokens, c.cached_tokens) == (300, 256)


def test_tools_go_out_in_the_wire_shape_and_calls_come_back_typed(server: FaultServer) -> None:
    from bot.llm import Tool, ToolCall

    call = {"id": "call_9", "type": "function", "function": {"name": "run_tests", "arguments": '{"code": "x"}'}}
    body = {"id": "c1", "object": "chat.completion", "created": 0, "model": "m",
            "choices": [{"index": 0, "finish_reason": "tool_calls",
                         "message": {"role": "assistant", "content": None, "tool_calls": [call]}}],
            "usage": {"prompt_tokens": 5, "completion_tokens": 4, "total_tokens": 9}}
    server.script = [lambda auth: (200, {"Content-Type": "application/json"}, json.dumps(body).encode())]
    tool = Tool("run_tests", "run them", {"type": "object", "properties": {"code": {"type": "string"}}})
    history = [*ASK, Message("assistant", "", tool_calls=(ToolCall("call_1", "run_tests", '{"code": "y"}'),)),
               Message("tool", "FAILED", tool_call_id="call_1")]
    c = llm(server).complete_with_tools(history, [tool], temperature=0.0, max_tokens=50)
    assert c.tool_calls == (ToolCall("call_9", "run_tests", '{"code": "x"}'),) and c.finish_reason == "tool_calls"
    (req,) = server.seen
    assert req["body"]["tools"] == [{"type": "function", "function": {"name": "run_tests", "description": "run them",
                                                                      "parameters": tool.parameters}}]
    assert req["body"]["tool_choice"] == "auto"
    assert req["body"]["messages"][2]["tool_calls"][0]["function"] == {"name": "run_tests",
                                                                       "arguments": '{"code": "y"}'}
    assert req["body"]["messages"][3] == {"role": "tool", "content": "FAILED", "tool_call_id": "call_1"}


def test_429_waits_for_retry_after_then_succeeds(server: FaultServer) -> None:
    server.script = [status(429, "slow down", **{"Retry-After": "1"}), ok()]
    start = time.monotonic()
    c = llm(server).complete(ASK)
    assert c.text == "hi" and c.attempts == 2
    gap = server.seen[1]["t"] - server.seen[0]["t"]
    assert 0.9 <= gap < 3, gap
    assert time.monotonic() - start < 5


def test_429_on_one_key_moves_to_the_next_without_waiting(server: FaultServer) -> None:
    server.script = [status(429, **{"Retry-After": "30"}), ok(), ok()]
    model = llm(server, keys="sk-key-aaaa1, sk-key-bbbb2")
    start = time.monotonic()
    assert model.complete(ASK).text == "hi"
    assert model.complete(ASK).text == "hi"  # key a still rests: b serves again
    assert time.monotonic() - start < 3
    assert server.keys_seen == ["sk-key-aaaa1", "sk-key-bbbb2", "sk-key-bbbb2"]


def test_keys_rotate_round_robin(server: FaultServer) -> None:
    model = llm(server, keys="k-one-11111,k-two-22222,k-three-3333")
    for _ in range(4):
        model.complete(ASK)
    assert server.keys_seen == ["k-one-11111", "k-two-22222", "k-three-3333", "k-one-11111"]


def test_5xx_is_retried_with_backoff(server: FaultServer) -> None:
    server.script = [status(500), status(503), ok()]
    c = llm(server).complete(ASK)
    assert c.text == "hi" and c.attempts == 3


def test_persistent_5xx_fails_clearly_after_the_last_retry(server: FaultServer) -> None:
    server.default = status(500, "the model crashed")
    with pytest.raises(LLMRequestFailed) as err:
        llm(server, max_retries=2).complete(ASK)
    message = str(err.value)
    assert "failed after 3 attempt(s)" in message and "HTTP 500" in message and "the model crashed" in message
    assert server.base in message
    assert len(server.seen) == 3


def test_a_hang_past_the_timeout_is_retried(server: FaultServer) -> None:
    server.script = [hang, ok()]
    start = time.monotonic()
    c = llm(server, timeout_s=0.3).complete(ASK)
    assert c.text == "hi" and c.attempts == 2
    assert time.monotonic() - start < 3


def test_a_server_that_never_answers_fails_in_bounded_time(server: FaultServer) -> None:
    server.default = hang
    start = time.monotonic()
    with pytest.raises(LLMRequestFailed, match="no answer within the 0.3 s timeout"):
        llm(server, timeout_s=0.3, max_retries=2).complete(ASK)
    assert time.monotonic() - start < 4
    assert len(server.seen) == 3


@pytest.mark.parametrize("bad", [raw(b'{"id": "c1", "choices": [{"mess'), raw(b"<html>Bad Gateway</html>", "text/html"),
                                 raw(b'{"unexpected": true}')])
def test_a_malformed_body_is_retried(server: FaultServer, bad: Behaviour) -> None:
    server.script = [bad, ok("fine")]
    c = llm(server).complete(ASK)
    assert c.text == "fine" and c.attempts == 2


def test_a_body_that_stays_malformed_is_reported(server: FaultServer) -> None:
    server.default = raw(b"{not json")
    with pytest.raises(LLMRequestFailed, match="malformed response from http://127.0.0.1"):
        llm(server, max_retries=1).complete(ASK)


def test_an_empty_choice_list_is_retried_then_reported(server: FaultServer) -> None:
    empty = raw(json.dumps({"id": "c", "object": "chat.completion", "created": 0, "model": "m",
                            "choices": []}).encode())
    server.script = [empty, ok("second time")]
    assert llm(server).complete(ASK).text == "second time"
    server.default = empty
    with pytest.raises(LLMRequestFailed, match="answered with no choices"):
        llm(server, max_retries=1).complete(ASK)


def test_a_401_key_is_dropped_with_a_warning(server: FaultServer, caplog: pytest.LogCaptureFixture) -> None:
    server.default = lambda auth: (status(401, "invalid key")(auth) if auth == "Bearer sk-revoked-key-1111"
                                   else ok()(auth))
    model = llm(server, keys="sk-revoked-key-1111,sk-good-key-2222", max_retries=0)
    with caplog.at_level(logging.WARNING, logger="bot.llm"):
        assert model.complete(ASK).text == "hi"  # a dropped key costs no retry, even with max_retries=0
        assert model.complete(ASK).text == "hi"
    assert server.keys_seen == ["sk-revoked-key-1111", "sk-good-key-2222", "sk-good-key-2222"]
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert any("rejected (HTTP 401) and is dropped; 1 key(s) left" in w for w in warnings), warnings
    assert not any("sk-revoked-key-1111" in w for w in warnings)  # keys never reach the log whole


def test_every_key_rejected_is_a_bad_key_error(server: FaultServer, monkeypatch: pytest.MonkeyPatch) -> None:
    server.default = status(401, "invalid key")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-a-000000001,sk-b-000000002")
    model = OpenAILLM("m", api_base=server.base, backoff_s=0.01)
    with pytest.raises(BadAPIKey, match="every API key \\(from OPENAI_API_KEY\\) was rejected .*check OPENAI_API_KEY"):
        model.complete(ASK)
    assert len(server.seen) == 2


def test_an_unknown_model_is_model_unavailable(server: FaultServer) -> None:
    server.script = [status(404, "model 'test-model' not found")]
    with pytest.raises(ModelUnavailable, match="does not serve model 'test-model'.*not found"):
        llm(server).complete(ASK)
    assert len(server.seen) == 1


def test_a_bad_request_is_not_retried(server: FaultServer) -> None:
    server.script = [status(400, "maximum context length is 4096 tokens")]
    with pytest.raises(PromptTooLong, match="refused the request: HTTP 400 .*maximum context length"):
        llm(server).complete(ASK)
    assert len(server.seen) == 1
    server.script = [status(400, "temperature must be at most 2")]
    with pytest.raises(LLMRequestFailed, match="refused the request: HTTP 400 .*temperature") as refused:
        llm(server).complete(ASK)
    assert not isinstance(refused.value, PromptTooLong), "only a prompt longer than the context is the prompt's"


def test_nothing_listening_is_retried_then_reported() -> None:
    with socket.socket() as s:  # a port that was free a moment ago: connections are refused
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    model = OpenAILLM("m", api_base=f"http://127.0.0.1:{port}/v1", max_retries=2, backoff_s=0.01, timeout_s=1)
    start = time.monotonic()
    with pytest.raises(LLMRequestFailed, match="failed after 3 attempt\\(s\\): could not connect to http://127.0.0.1"):
        model.complete(ASK)
    assert time.monotonic() - start < 5


def test_retry_after_forms() -> None:
    assert retry_after_s({"retry-after": "7"}) == 7
    assert retry_after_s({"retry-after-ms": "250", "retry-after": "7"}) == 0.25
    assert 55 < retry_after_s({"retry-after": formatdate(time.time() + 60, usegmt=True)}) <= 60  # type: ignore[operator]
    assert retry_after_s({"retry-after": "soon"}) is None
    assert retry_after_s({}) is None


def test_key_pool_rests_and_wakes() -> None:
    now = [100.0]
    pool = KeyPool(["a", "b"], clock=lambda: now[0])
    assert pool.take() == "a"
    pool.rest("a", 10)
    assert pool.take() == "b" and pool.take() == "b" and pool.wait_s() == 0
    pool.rest("b", 5)
    assert pool.wait_s() == 5 and pool.take() == "b"  # all rest: the first to wake is next
    now[0] += 10
    assert pool.wait_s() == 0 and {pool.take(), pool.take()} == {"a", "b"}
    pool.drop("a", 401)
    pool.drop("b", 401)
    with pytest.raises(BadAPIKey):
        pool.take()
