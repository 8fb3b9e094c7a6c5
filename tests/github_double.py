"""A stateful GitHub REST double on 127.0.0.1, held to GitHub's own OpenAPI contract.

It keeps what fixbot reads and writes — repositories, workflow runs, jobs and their logs, git blobs, trees,
commits and refs, pull requests, labels, comments — and answers PyGithub over real HTTP. Every request and every
response it generates is validated with openapi-core against `shared/data/github/rest-api-subset.json`; anything
that does not fit (a path outside the contract, a missing field, a wrong type) is collected in `violations`, and
the `github_double` fixture fails the test at teardown if there are any. Job logs are served by a second server
(another origin, like GitHub's blob storage) that records a violation if it ever sees an Authorization header.

Faults are switched on per test with `inject`: a primary rate limit (403, x-ratelimit-remaining 0), a secondary
one (429 Retry-After), 502, a connection dropped before the request is processed, or one dropped after it was
processed (the client never hears that it worked), a 403 for a missing permission, and an expired signed log URL.
Repository flags give GitHub's other refusals (`Repo.drafts`)."""
from __future__ import annotations

import hashlib
import itertools
import json
import re
import socket
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import pytest

# CONTRACT, contract, DOCS, NOW and Reply stay importable from here, as before the split
from tests.github_contract import CONTRACT, check_request, check_response, contract, contract_request  # noqa: F401
from tests.github_routes import DOCS, NOW, Reply, Routes


@dataclass
class Fault:
    # rate_limit | rate_limit_long | retry_after | bad_gateway | forbidden | drop | drop_after | expired (log host)
    kind: str
    method: str
    path: str  # a regular expression, searched in the request path
    times: int = 1
    hits: int = 0


@dataclass
class Repo:
    owner: str
    name: str
    id: int
    default_branch: str = "main"
    drafts: bool = True  # False: a plan without draft PRs (GitHub answers 422)
    refs: dict[str, str] = field(default_factory=dict)  # "heads/main" -> commit sha
    pulls: list[dict] = field(default_factory=list)
    issue_labels: dict[int, list[str]] = field(default_factory=dict)
    comments: dict[int, list[str]] = field(default_factory=dict)
    runs: dict[int, dict] = field(default_factory=dict)
    jobs: dict[int, dict] = field(default_factory=dict)

    @property
    def full_name(self) -> str:
        return f"{self.owner}/{self.name}"


@dataclass(frozen=True)
class Seen:
    method: str
    path: str
    status: int
    authorization: str | None


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as GitHub: a dropped connection then hits a reused socket

    def _serve(self) -> None:
        self.server.serve(self)  # type: ignore[attr-defined]

    do_GET = do_POST = do_PATCH = do_PUT = do_DELETE = _serve

    def log_message(self, *args: Any) -> None:  # quiet
        pass


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False

    def __init__(self, serve: Callable[[_Handler], None]):
        super().__init__(("127.0.0.1", 0), _Handler)
        self.serve = serve
        threading.Thread(target=self.serve_forever, args=(0.05,), daemon=True).start()  # quick shutdown

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


class GitHubDouble(Routes):
    def __init__(self, token: str, owner: str = "octo-org", name: str = "gradebook"):
        self.token = token
        self.violations: list[str] = []
        self.seen: list[Seen] = []
        self.log_seen: list[Seen] = []
        self.ref_updates: list[str] = []  # any PATCH of a ref: fixbot must never send one
        self.faults: list[Fault] = []
        self.blobs: dict[str, bytes] = {}
        self.trees: dict[str, dict[str, tuple[str, str]]] = {}  # sha -> path -> (mode, blob sha), flattened
        self.commits: dict[str, dict] = {}
        self.repos: dict[str, Repo] = {}
        self._ids = itertools.count(1001)
        self._lock = threading.RLock()
        self._signed: dict[int, str] = {}  # job id -> the one valid log signature
        self._api = _Server(self._serve_api)
        self._logs = _Server(self._serve_log)
        self.base_url, self.log_base = self._api.url, self._logs.url
        self.repo = self.add_repo(owner, name)

    def stop(self) -> None:
        for server in (self._api, self._logs):
            server.shutdown()
            server.server_close()

    # ---- state for tests -------------------------------------------------------------------------------------
    def add_repo(self, owner: str, name: str) -> Repo:
        repo = Repo(owner, name, next(self._ids))
        self.repos[repo.full_name] = repo
        return repo

    def inject(self, kind: str, method: str, path: str, times: int = 1) -> Fault:
        fault = Fault(kind, method, path, times)
        self.faults.append(fault)
        return fault

    def put_tree(self, files: dict[str, bytes], modes: dict[str, str] | None = None) -> str:
        entries = {}
        for path, content in files.items():
            sha = hashlib.sha1(b"blob %d\0" % len(content) + content).hexdigest()  # git's own blob id
            self.blobs[sha] = content
            entries[path] = ((modes or {}).get(path, "100644"), sha)
        sha = hashlib.sha1(json.dumps(sorted(entries.items())).encode()).hexdigest()
        self.trees[sha] = entries
        return sha

    def put_commit(self, tree: str, parents: list[str], message: str, date: str = NOW) -> str:
        person = {"name": "Octo Cat", "email": "octocat@example.com", "date": date}
        sha = hashlib.sha1(json.dumps([tree, parents, message, date]).encode()).hexdigest()
        self.commits[sha] = {"tree": tree, "parents": parents, "message": message, "author": person}
        return sha

    def seed(self, files: dict[str, bytes], branch: str = "main", repo: Repo | None = None) -> str:
        repo = repo or self.repo
        sha = self.put_commit(self.put_tree(files), [], "initial")
        repo.refs[f"heads/{branch}"] = sha
        return sha

    def files(self, commit_sha: str) -> dict[str, bytes]:
        return {p: self.blobs[b] for p, (_, b) in self.trees[self.commits[commit_sha]["tree"]].items()}

    def add_pull(self, head: str, base: str, title: str, body: str, repo: Repo | None = None) -> dict:
        repo = repo or self.repo
        number = len(repo.pulls) + 1
        pull = {"number": number, "id": next(self._ids), "head": head, "base": base, "title": title, "body": body,
                "draft": False, "state": "open", "head_sha": repo.refs[f"heads/{head}"]}
        repo.pulls.append(pull)
        return pull

    def add_run(self, head_sha: str, *, head_branch: str = "main", event: str = "push", pulls: tuple[int, ...] = (),
                head_repo: Repo | None = None, repo: Repo | None = None) -> int:
        repo = repo or self.repo
        run_id = next(self._ids)
        repo.runs[run_id] = {"head_sha": head_sha, "head_branch": head_branch, "event": event, "pulls": pulls,
                             "head_repo": (head_repo or repo).full_name}
        return run_id

    def add_job(self, run_id: int, name: str, conclusion: str, log: str, repo: Repo | None = None) -> int:
        repo = repo or self.repo
        job_id = next(self._ids)
        repo.jobs[job_id] = {"run_id": run_id, "name": name, "conclusion": conclusion, "log": log}
        return job_id

    def writes(self) -> list[tuple[str, str]]:
        return [(s.method, s.path) for s in self.seen if s.method != "GET"]

    # ---- the API server --------------------------------------------------------------------------------------
    def _serve_api(self, h: _Handler) -> None:
        raw = h.rfile.read(int(h.headers.get("Content-Length") or 0))
        request, path = contract_request(h.command, h.path, h.headers, raw)
        query = dict(parse_qsl(urlsplit(h.path).query))
        check_request(self.violations, request, f"request {h.command} {path}")
        fault = self._take_fault(h.command, path)
        if fault and fault.kind == "drop":
            return self._drop(h, path)
        with self._lock:
            try:
                status, headers, payload = self._route(h, path, query, raw) if fault is None or fault.kind == \
                    "drop_after" else self._fault_reply(fault)
            except Exception as exc:  # a bug in the double must fail the test, not hang the client
                self.violations.append(f"double crashed on {h.command} {path}: {exc!r}")
                status, headers, payload = 500, {}, {"message": "double crashed"}
        if fault and fault.kind == "drop_after":
            return self._drop(h, path)
        data = b"" if payload is None else json.dumps(payload).encode()
        headers = {"Content-Type": "application/json; charset=utf-8", **headers} if payload is not None else headers
        check_response(self.violations, request, status, headers, data, injected=fault is not None)
        self.seen.append(Seen(h.command, path, status, h.headers.get("Authorization")))
        self._send(h, status, headers, data)

    def _take_fault(self, method: str, path: str) -> Fault | None:
        with self._lock:
            for fault in self.faults:
                if fault.hits < fault.times and fault.method == method and re.search(fault.path, path):
                    fault.hits += 1
                    return fault
        return None

    def _fault_reply(self, fault: Fault) -> Reply:
        if fault.kind in ("rate_limit", "rate_limit_long"):  # the primary limit resets in 1 s, or in an hour
            reset = str(int(time.time()) + (1 if fault.kind == "rate_limit" else 3600))
            return 403, {"x-ratelimit-limit": "5000", "x-ratelimit-remaining": "0", "x-ratelimit-used": "5000",
                         "x-ratelimit-reset": reset, "x-ratelimit-resource": "core"}, \
                {"message": "API rate limit exceeded for installation ID 1.", "documentation_url": DOCS}
        if fault.kind == "retry_after":
            return 429, {"Retry-After": "1"}, {"message": "You have exceeded a secondary rate limit. Please wait a "
                                                          "few minutes before you try again.",
                                               "documentation_url": DOCS}
        if fault.kind == "bad_gateway":
            return 502, {}, {"message": "Server Error"}
        if fault.kind == "forbidden":  # a token without the permission: not retryable
            return 403, {}, {"message": "Resource not accessible by integration", "documentation_url": DOCS,
                             "status": "403"}
        raise AssertionError(f"unknown fault {fault.kind}")

    def _drop(self, h: _Handler, path: str) -> None:
        self.seen.append(Seen(h.command, path, 0, h.headers.get("Authorization")))
        h.close_connection = True
        h.connection.shutdown(socket.SHUT_RDWR)  # no status line: the client sees the connection die

    @staticmethod
    def _send(h: _Handler, status: int, headers: dict[str, str], data: bytes) -> None:
        h.send_response(status)
        for key, value in headers.items():
            h.send_header(key, value)
        h.send_header("Content-Length", str(len(data)))
        h.end_headers()
        h.wfile.write(data)

    # ---- the log host (another origin: no token may arrive here) ------------------------------------------------
    def _serve_log(self, h: _Handler) -> None:
        auth = h.headers.get("Authorization")
        self.log_seen.append(Seen(h.command, h.path, 200, auth))
        if auth is not None:
            self.violations.append(f"the log host received an Authorization header on {h.path}")
        split = urlsplit(h.path)
        m = re.fullmatch(r"/signed/jobs/(\d+)", split.path)
        fault = self._take_fault("GET", split.path)
        sig = dict(parse_qsl(split.query)).get("sig")
        job = next((r.jobs[int(m.group(1))] for r in self.repos.values() if m and int(m.group(1)) in r.jobs), None)
        if job is None or sig != self._signed.get(int(m.group(1))) or (fault and fault.kind == "expired"):
            return self._send(h, 403, {"Content-Type": "application/xml"}, b"<Error>AuthenticationFailed</Error>")
        self._send(h, 200, {"Content-Type": "text/plain; charset=utf-8"}, job["log"].encode())


@pytest.fixture
def github_double() -> Iterator[GitHubDouble]:
    """A fresh double; the test fails if anything it saw broke GitHub's contract."""
    double = GitHubDouble(token="ghs_" + "T0k3n" * 8)
    try:
        yield double
    finally:
        double.stop()
    assert double.violations == [], "GitHub contract violations:\n" + "\n".join(double.violations)
