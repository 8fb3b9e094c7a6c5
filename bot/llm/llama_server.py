"""Run llama-cpp-python's OpenAI-compatible server on loopback for a GGUF file, for as long as a `with` lasts.

Used by the tests and the latency benchmark to exercise the `openai:` backend against a real server
without any network, and handy for sharing one loaded model between several processes.
"""
from __future__ import annotations

import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO

from bot.llm.bundled import LOCAL_EXTRA
from bot.llm.errors import ModelUnavailable
from bot.llm.gguf_files import check_gguf
from bot.llm.llamacpp_backend import available_cores


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def serve_gguf(model_path: Path, *, alias: str = "bundled", n_ctx: int = 4096, n_threads: int | None = None,
               port: int | None = None, ready_timeout_s: float = 120.0) -> Iterator[str]:
    """Yield the server's api base (http://127.0.0.1:PORT/v1) once /v1/models answers; always stop it."""
    check_gguf(model_path)
    port = port or free_port()
    threads = str(n_threads or available_cores())
    cmd = [sys.executable, "-m", "llama_cpp.server", "--model", str(model_path), "--model_alias", alias,
           "--host", "127.0.0.1", "--port", str(port), "--n_ctx", str(n_ctx), "--n_threads", threads,
           "--n_threads_batch", threads,
           # The server defaults to logits for every prompt token, which costs a vocabulary-sized matmul per
           # token and slows prompt evaluation; chat completion needs only the last.
           "--logits_all", "false"]
    base = f"http://127.0.0.1:{port}/v1"
    # A file, not a pipe, takes the server's log: a pipe nobody reads fills up and stalls the server.
    with tempfile.TemporaryFile() as log:
        proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        try:
            _wait_ready(proc, base, log, ready_timeout_s)
            yield base
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=15)


def _wait_ready(proc: subprocess.Popen[bytes], base: str, log: IO[bytes], timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while True:
        if proc.poll() is not None:
            log.seek(0)
            tail = log.read().decode(errors="replace")[-1500:]
            hint = f"; is llama-cpp-python[server] installed? pip install '{LOCAL_EXTRA}'" \
                if "No module named" in tail else ""
            raise ModelUnavailable(f"llama_cpp.server exited with code {proc.returncode}{hint}: "
                                   f"{' | '.join(tail.strip().splitlines()[-3:])}")
        try:
            with urllib.request.urlopen(f"{base}/models", timeout=2) as r:
                if r.status == 200:
                    return
        except OSError:
            pass  # not listening yet
        if time.monotonic() > deadline:
            raise ModelUnavailable(f"llama_cpp.server did not answer {base}/models within {timeout_s:g} s")
        time.sleep(0.25)
