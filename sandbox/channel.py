"""The attached stdin/stdout of one container's resident runner: send a request, read one answer line."""
from __future__ import annotations

import socket
import struct
import time
from typing import cast

STDERR = 2
MAX_ANSWER_BYTES = 256 * 1024 * 1024  # answers are bounded by the output caps; this stops a runaway stream
STDERR_KEEP = 16 * 1024


class ChannelTimeout(Exception):
    """No answer before the deadline; the container must be treated as broken."""


class ChannelClosed(Exception):
    """The runner went away (killed from inside, or the container died)."""


class Channel:
    def __init__(self, handle: object):
        self._handle = handle
        # docker-py hands back a SocketIO wrapper on unix sockets; the real socket is needed for timeouts.
        # cast: the docker SDK is untyped, so its handle is only known as `object` here.
        self._sock = cast(socket.socket, getattr(handle, "_sock", handle))
        self._stdout = bytearray()
        self.stderr = bytearray()

    def _recv_exactly(self, n: int, deadline: float) -> bytes:
        chunks, got = [], 0
        while got < n:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise ChannelTimeout("no answer before the deadline")
            self._sock.settimeout(remaining)
            try:
                data = self._sock.recv(min(n - got, 1 << 20))
            except TimeoutError as exc:
                raise ChannelTimeout("no answer before the deadline") from exc
            except OSError as exc:
                raise ChannelClosed(str(exc)) from exc
            if not data:
                raise ChannelClosed(self.stderr.decode("utf-8", "backslashreplace")[-500:] or "stream ended")
            chunks.append(data)
            got += len(data)
        return b"".join(chunks)

    def request(self, data: bytes, deadline_s: float) -> bytes:
        deadline = time.monotonic() + deadline_s
        try:
            self._sock.settimeout(max(1.0, deadline_s))
            self._sock.sendall(data)
        except TimeoutError as exc:
            raise ChannelTimeout("the sandbox did not take its input before the deadline") from exc
        except OSError as exc:
            raise ChannelClosed(str(exc)) from exc
        # Docker's stream format: 8-byte header (stream id, 3 pad bytes, big-endian size), then the payload.
        while b"\n" not in self._stdout:
            stream, size = struct.unpack(">BxxxL", self._recv_exactly(8, deadline))
            chunk = self._recv_exactly(size, deadline)
            if stream == STDERR:
                self.stderr = (self.stderr + chunk)[-STDERR_KEEP:]
            else:
                self._stdout += chunk
                if len(self._stdout) > MAX_ANSWER_BYTES:
                    raise ChannelClosed("the runner answered more than it ever should")
        line, _, rest = bytes(self._stdout).partition(b"\n")
        self._stdout = bytearray(rest)
        return line

    def close(self) -> None:
        try:
            self._handle.close()  # type: ignore[attr-defined]
        except OSError:
            pass
