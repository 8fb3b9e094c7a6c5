"""The build container's only way out: an HTTP CONNECT proxy that tunnels to the allowed host names only.

Two halves joined by a Unix socket on a Docker volume that only the two containers mount:
  serve SOCKET HOST[:PORT] ...   in the proxy container (default bridge): the proxy itself (a bare HOST allows
                                 ports 443 and 80); every other target is refused with 403
  forward PORT SOCKET            in the build container (no network at all): 127.0.0.1:PORT -> SOCKET
Runs on the sandbox image's Python (3.9 and later), standard library only.
"""
from __future__ import annotations

import functools
import os
import socket
import sys
import threading
from collections.abc import Callable

BUFFER = 65536
HEADER_LIMIT = 16384

Rules = set[tuple[str, str]]  # (host, port); port "*" is 443 or 80


def allowed(target: str, rules: Rules) -> bool:
    host, _, port = target.rpartition(":")
    host = host.strip("[]").lower().rstrip(".")
    return (host, port) in rules or (host, "*") in rules and port in ("443", "80")


def read_head(conn: socket.socket) -> tuple[str | None, bytes]:
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = conn.recv(4096)
        if not chunk or len(data) > HEADER_LIMIT:
            return None, b""
        data += chunk
    head, _, rest = data.partition(b"\r\n\r\n")
    return head.decode("latin-1"), rest


def pipe(src: socket.socket, dst: socket.socket) -> None:
    try:
        while True:
            chunk = src.recv(BUFFER)
            if not chunk:
                break
            dst.sendall(chunk)
    except OSError:
        pass
    finally:
        for sock in (src, dst):
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


def handle(conn: socket.socket, rules: Rules) -> None:
    with conn:
        head, rest = read_head(conn)
        words = (head or "").split("\r\n", 1)[0].split()
        if len(words) != 3 or words[0] != "CONNECT":
            conn.sendall(b"HTTP/1.1 405 only CONNECT\r\n\r\n")
            return
        target = words[1]
        if not allowed(target, rules):
            print("denied " + target, flush=True)
            conn.sendall(b"HTTP/1.1 403 not an allowed package index host\r\n\r\n")
            return
        host, _, port = target.rpartition(":")
        try:
            upstream = socket.create_connection((host.strip("[]"), int(port)), timeout=30)
        except (OSError, ValueError) as exc:
            conn.sendall(("HTTP/1.1 502 %s\r\n\r\n" % exc.__class__.__name__).encode())
            return
        upstream.settimeout(None)
        with upstream:
            conn.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
            if rest:
                upstream.sendall(rest)
            back = threading.Thread(target=pipe, args=(upstream, conn), daemon=True)
            back.start()
            pipe(conn, upstream)
            back.join()


def parse_rules(args: list[str]) -> Rules:
    rules: Rules = set()
    for arg in args:
        host, sep, port = arg.lower().rpartition(":")
        rules.add((host, port) if sep and port.isdigit() else (arg.lower(), "*"))
    return rules


def forward(conn: socket.socket, path: str) -> None:
    with conn:
        upstream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            upstream.connect(path)
        except OSError:
            return
        with upstream:
            back = threading.Thread(target=pipe, args=(upstream, conn), daemon=True)
            back.start()
            pipe(conn, upstream)
            back.join()


def main() -> None:
    mode, args = sys.argv[1], sys.argv[2:]
    work: Callable[[socket.socket], None]  # serves one accepted connection
    if mode == "serve":
        server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        server.bind(args[0])
        os.chmod(args[0], 0o666)
        work = functools.partial(handle, rules=parse_rules(args[1:]))
    else:
        server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        server.bind(("127.0.0.1", int(args[0])))
        work = functools.partial(forward, path=args[1])
    server.listen(64)
    print("ready", flush=True)
    while True:
        conn, _ = server.accept()
        threading.Thread(target=work, args=(conn,), daemon=True).start()


if __name__ == "__main__":
    main()
