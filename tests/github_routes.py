"""The double's routes: the GitHub REST endpoints fixbot uses, as handlers over the double's state, the payload
builders that fill the contract's required fields, and the dispatch. A mixin of GitHubDouble (github_double.py)."""
from __future__ import annotations

import base64
import hashlib
import json
import re
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, urlencode

if TYPE_CHECKING:
    from tests.github_double import Repo

DOCS = "https://docs.github.com/rest"
NOW = "2026-11-22T10:00:00Z"
Reply = tuple[int, dict[str, str], Any]  # status, headers, JSON payload (or None)


class Routes:
    """The endpoints of operations.txt that fixbot uses, with GitHub's semantics where they matter to fixbot
    (422s for a ref or a PR that exists, unknown objects, pagination with Link headers)."""

    token: str
    violations: list[str]
    repos: dict[str, Repo]
    base_url: str
    blobs: dict[str, bytes]
    trees: dict[str, dict[str, tuple[str, str]]]
    commits: dict[str, dict]
    ref_updates: list[str]
    _signed: dict[int, str]
    _ids: Iterator[int]
    log_base: str
    put_commit: Callable[..., str]

    # ---- payloads: the contract's required fields, filled the way GitHub fills them ----------------------------
    def _user(self, login: str) -> dict:
        u = f"{self.base_url}/users/{quote(login)}"
        links = ("followers", "following", "gists", "starred", "subscriptions", "organizations", "repos", "events",
                 "received_events")
        return {"login": login, "id": int(hashlib.sha1(login.encode()).hexdigest()[:6], 16), "node_id": f"U_{login}",
                "avatar_url": f"https://avatars.githubusercontent.com/u/{len(login)}", "gravatar_id": "", "url": u,
                "html_url": f"https://github.com/{quote(login)}", "type": "User", "site_admin": False,
                **{f"{k}_url": f"{u}/{k}" for k in links}}

    def _repo_payload(self, repo: Repo, kind: str) -> dict:
        u = f"{self.base_url}/repos/{repo.full_name}"
        links = ("archive", "assignees", "blobs", "branches", "collaborators", "comments", "commits", "compare",
                 "contents", "contributors", "deployments", "downloads", "events", "forks", "git_commits", "git_refs",
                 "git_tags", "hooks", "issue_comment", "issue_events", "issues", "keys", "labels", "languages",
                 "merges", "milestones", "notifications", "pulls", "releases", "stargazers", "statuses",
                 "subscribers", "subscription", "tags", "teams", "trees")
        payload = {"id": repo.id, "node_id": f"R_{repo.id}", "name": repo.name, "full_name": repo.full_name,
                   "owner": self._user(repo.owner), "private": False, "html_url": f"https://github.com/{repo.full_name}",
                   "description": None, "fork": False, "url": u, **{f"{k}_url": f"{u}/{k}" for k in links}}
        if kind == "minimal":
            return payload
        payload.update({
            "clone_url": f"https://github.com/{repo.full_name}.git", "git_url": f"git://github.com/{repo.full_name}.git",
            "ssh_url": f"git@github.com:{repo.full_name}.git", "svn_url": f"https://github.com/{repo.full_name}",
            "mirror_url": None, "homepage": None, "language": "Python", "default_branch": repo.default_branch,
            "forks": 0, "forks_count": 0, "stargazers_count": 0, "watchers": 0, "watchers_count": 0, "size": 12,
            "open_issues": len(repo.pulls), "open_issues_count": len(repo.pulls), "has_issues": True,
            "has_projects": False, "has_wiki": False, "has_pages": False, "has_downloads": True, "archived": False,
            "disabled": False, "license": None, "pushed_at": NOW, "created_at": NOW, "updated_at": NOW})
        if kind == "full":
            payload.update({"has_discussions": False, "network_count": 0, "subscribers_count": 1})
        return payload

    def _commit_payload(self, repo: Repo, sha: str) -> dict:
        u, html = f"{self.base_url}/repos/{repo.full_name}", f"https://github.com/{repo.full_name}"
        c = self.commits[sha]
        return {"sha": sha, "node_id": f"C_{sha[:12]}", "url": f"{u}/git/commits/{sha}",
                "html_url": f"{html}/commit/{sha}",
                "author": c["author"], "committer": c["author"], "message": c["message"],
                "tree": {"sha": c["tree"], "url": f"{u}/git/trees/{c['tree']}"},
                "parents": [{"sha": p, "url": f"{u}/git/commits/{p}", "html_url": f"{html}/commit/{p}"}
                            for p in c["parents"]],
                "verification": {"verified": False, "reason": "unsigned", "signature": None, "payload": None,
                                 "verified_at": None}}

    def _ref_payload(self, repo: Repo, ref: str) -> dict:
        u, sha = f"{self.base_url}/repos/{repo.full_name}", repo.refs[ref]
        return {"ref": f"refs/{ref}", "node_id": f"REF_{abs(hash(ref))}", "url": f"{u}/git/refs/{ref}",
                "object": {"type": "commit", "sha": sha, "url": f"{u}/git/commits/{sha}"}}

    def _label_payload(self, repo: Repo, name: str) -> dict:
        n = int(hashlib.sha1(name.encode()).hexdigest()[:8], 16)
        return {"id": n, "node_id": f"LA_{n}", "url": f"{self.base_url}/repos/{repo.full_name}/labels/{quote(name)}",
                # "" not None: the `label` schema allows null, but the label items inside pull-request(-simple) do not
                "name": name, "description": "", "color": "ededed", "default": False}

    def _pull_payload(self, repo: Repo, pull: dict, full: bool) -> dict:
        u, n = f"{self.base_url}/repos/{repo.full_name}", pull["number"]
        html = f"https://github.com/{repo.full_name}/pull/{n}"

        def part(branch: str) -> dict:
            sha = repo.refs.get(f"heads/{branch}", pull["head_sha"])
            return {"label": f"{repo.owner}:{branch}", "ref": branch, "sha": sha, "user": self._user(repo.owner),
                    "repo": self._repo_payload(repo, "repository")}

        links = {"self": f"{u}/pulls/{n}", "html": html, "issue": f"{u}/issues/{n}",
                 "comments": f"{u}/issues/{n}/comments",
                 "review_comments": f"{u}/pulls/{n}/comments", "review_comment": f"{u}/pulls/comments{{/number}}",
                 "commits": f"{u}/pulls/{n}/commits", "statuses": f"{u}/statuses/{pull['head_sha']}"}
        payload = {
            "url": links["self"], "id": pull["id"], "node_id": f"PR_{pull['id']}", "html_url": html,
            "diff_url": f"{html}.diff",
            "patch_url": f"{html}.patch", "issue_url": links["issue"], "commits_url": links["commits"],
            "review_comments_url": links["review_comments"], "review_comment_url": links["review_comment"],
            "comments_url": links["comments"], "statuses_url": links["statuses"], "number": n, "state": pull["state"],
            "locked": False, "title": pull["title"], "user": self._user("github-actions[bot]"), "body": pull["body"],
            "labels": [self._label_payload(repo, name) for name in repo.issue_labels.get(n, [])], "milestone": None,
            "created_at": NOW, "updated_at": NOW, "closed_at": None, "merged_at": None, "merge_commit_sha": None,
            "assignee": None, "assignees": [], "requested_reviewers": [], "requested_teams": [],
            "head": part(pull["head"]), "base": part(pull["base"]), "draft": pull["draft"],
            "_links": {k: {"href": v} for k, v in links.items()}, "author_association": "NONE", "auto_merge": None}
        if full:
            payload.update({"merged": False, "mergeable": None, "rebaseable": None, "mergeable_state": "unknown",
                            "merged_by": None, "comments": len(repo.comments.get(n, [])), "review_comments": 0,
                            "maintainer_can_modify": False, "commits": 1, "additions": 1, "deletions": 1,
                            "changed_files": 1})
        return payload

    def _run_payload(self, repo: Repo, run_id: int) -> dict:
        run, u = repo.runs[run_id], f"{self.base_url}/repos/{repo.full_name}"
        head_repo = self.repos[run["head_repo"]]
        pulls = [p for p in repo.pulls if p["number"] in run["pulls"]]
        failed = any(j["conclusion"] == "failure" for j in repo.jobs.values() if j["run_id"] == run_id)

        def minimal_pr(p: dict) -> dict:
            side = {"repo": {"id": repo.id, "url": u, "name": repo.name}}
            return {"id": p["id"], "number": p["number"], "url": f"{u}/pulls/{p['number']}",
                    "head": {"ref": p["head"], "sha": p["head_sha"], **side},
                    "base": {"ref": p["base"], "sha": repo.refs[f"heads/{p['base']}"], **side}}

        return {
            "id": run_id, "name": "CI", "node_id": f"WFR_{run_id}", "head_branch": run["head_branch"],
            "head_sha": run["head_sha"], "path": ".github/workflows/ci.yml", "display_title": "CI", "run_number": 7,
            "event": run["event"], "status": "completed", "conclusion": "failure" if failed else "success",
            "workflow_id": 161335, "url": f"{u}/actions/runs/{run_id}",
            "html_url": f"https://github.com/{repo.full_name}/actions/runs/{run_id}",
            "pull_requests": [minimal_pr(p) for p in pulls], "created_at": NOW, "updated_at": NOW,
            "jobs_url": f"{u}/actions/runs/{run_id}/jobs", "logs_url": f"{u}/actions/runs/{run_id}/logs",
            "check_suite_url": f"{u}/check-suites/1", "artifacts_url": f"{u}/actions/runs/{run_id}/artifacts",
            "cancel_url": f"{u}/actions/runs/{run_id}/cancel", "rerun_url": f"{u}/actions/runs/{run_id}/rerun",
            "workflow_url": f"{u}/actions/workflows/161335",
            "head_commit": {"id": run["head_sha"],
                            "tree_id": self.commits.get(run["head_sha"], {}).get("tree", "0" * 40),
                            "message": "a commit", "timestamp": NOW,
                            "author": {"name": "Octo Cat", "email": "octocat@example.com"},
                            "committer": {"name": "Octo Cat", "email": "octocat@example.com"}},
            "repository": self._repo_payload(repo, "minimal"),
            "head_repository": self._repo_payload(head_repo, "minimal")}

    def _job_payload(self, repo: Repo, job_id: int) -> dict:
        job, u = repo.jobs[job_id], f"{self.base_url}/repos/{repo.full_name}"
        run = repo.runs[job["run_id"]]
        return {"id": job_id, "run_id": job["run_id"], "run_url": f"{u}/actions/runs/{job['run_id']}",
                "node_id": f"CR_{job_id}", "head_sha": run["head_sha"], "url": f"{u}/actions/jobs/{job_id}",
                "html_url": f"https://github.com/{repo.full_name}/actions/runs/{job['run_id']}/job/{job_id}",
                "status": "completed", "conclusion": job["conclusion"], "created_at": NOW, "started_at": NOW,
                "completed_at": NOW, "name": job["name"], "steps": [], "check_run_url": f"{u}/check-runs/{job_id}",
                "labels": ["ubuntu-latest"], "runner_id": 1, "runner_name": "GitHub Actions 1", "runner_group_id": 1,
                "runner_group_name": "GitHub Actions", "workflow_name": "CI", "head_branch": run["head_branch"]}

    def _page(self, items: list, query: dict[str, str], path: str) -> tuple[list, dict[str, str]]:
        per, page = int(query.get("per_page", 30)), int(query.get("page", 1))
        last = max(1, -(-len(items) // per))
        headers = {}
        if page < last:
            def url(n: int) -> str:
                return f"{self.base_url}{path}?{urlencode({**query, 'page': n})}"
            headers["Link"] = f'<{url(page + 1)}>; rel="next", <{url(last)}>; rel="last"'
        return items[(page - 1) * per: page * per], headers

    # ---- handlers: (repo, *path groups, query=, body=, path=) -> (status, headers, payload) ---------------------
    def get_repo(self, repo: Repo, **_: Any) -> Reply:
        return 200, {}, self._repo_payload(repo, "full")

    def get_run(self, repo: Repo, run_id: str, **_: Any) -> Reply:
        if int(run_id) not in repo.runs:
            return _not_found()
        return 200, {}, self._run_payload(repo, int(run_id))

    def list_jobs(self, repo: Repo, run_id: str, query: dict[str, str], path: str, **_: Any) -> Reply:
        if int(run_id) not in repo.runs:
            return _not_found()
        jobs = [self._job_payload(repo, j) for j, job in repo.jobs.items() if job["run_id"] == int(run_id)]
        page, headers = self._page(jobs, query, path)
        return 200, headers, {"total_count": len(jobs), "jobs": page}

    def get_job(self, repo: Repo, job_id: str, **_: Any) -> Reply:
        return (200, {}, self._job_payload(repo, int(job_id))) if int(job_id) in repo.jobs else _not_found()

    def job_logs(self, repo: Repo, job_id: str, **_: Any) -> Reply:
        if int(job_id) not in repo.jobs:
            return _not_found()
        self._signed[int(job_id)] = sig = hashlib.sha1(f"{job_id}{next(self._ids)}".encode()).hexdigest()
        return 302, {"Location": f"{self.log_base}/signed/jobs/{job_id}?sig={sig}"}, None  # a fresh URL each time

    def get_commit(self, repo: Repo, sha: str, **_: Any) -> Reply:
        return (200, {}, self._commit_payload(repo, sha)) if sha in self.commits else _not_found()

    def get_ref(self, repo: Repo, ref: str, **_: Any) -> Reply:
        return (200, {}, self._ref_payload(repo, ref)) if ref in repo.refs else _not_found()

    def create_blob(self, repo: Repo, body: dict, **_: Any) -> Reply:
        content = body["content"]
        data = base64.b64decode(content) if body.get("encoding") == "base64" else content.encode()
        sha = hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()
        self.blobs[sha] = data
        url = f"{self.base_url}/repos/{repo.full_name}/git/blobs/{sha}"
        return 201, {"Location": url}, {"url": url, "sha": sha}

    def create_tree(self, repo: Repo, body: dict, **_: Any) -> Reply:
        base = body.get("base_tree")
        if base is not None and base not in self.trees:
            return _invalid(f"base_tree {base} is not a valid tree")
        entries = dict(self.trees[base]) if base else {}
        for item in body["tree"]:
            if item.get("sha") not in self.blobs or item.get("type") != "blob" or item["path"].startswith("/"):
                return _invalid(f"tree entry {item.get('path')} is not a valid blob")
            entries[item["path"]] = (item["mode"], item["sha"])
        sha = self.put_tree({p: self.blobs[b] for p, (_, b) in entries.items()},  # type: ignore[attr-defined]
                            {p: m for p, (m, _) in entries.items()})
        u = f"{self.base_url}/repos/{repo.full_name}/git"
        tree = [{"path": p, "mode": m, "type": "blob", "sha": b, "size": len(self.blobs[b]), "url": f"{u}/blobs/{b}"}
                for p, (m, b) in sorted(entries.items())]
        return 201, {"Location": f"{u}/trees/{sha}"}, {"sha": sha, "url": f"{u}/trees/{sha}", "tree": tree,
                                                      "truncated": False}

    def create_commit(self, repo: Repo, body: dict, **_: Any) -> Reply:
        if body.get("tree") not in self.trees or any(p not in self.commits for p in body.get("parents", [])):
            return _invalid("tree or parent is not a valid object")
        date = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())  # GitHub stamps the commit: seconds matter
        sha = self.put_commit(body["tree"], list(body.get("parents", [])), body["message"], date)
        payload = self._commit_payload(repo, sha)
        return 201, {"Location": payload["url"]}, payload

    def create_ref(self, repo: Repo, body: dict, **_: Any) -> Reply:
        ref = body["ref"]
        if not re.fullmatch(r"refs/[^/]+/.+", ref):
            return _invalid("Reference name invalid")
        if body["sha"] not in self.commits:
            return _invalid("Object does not exist")
        if ref[len("refs/"):] in repo.refs:
            return _invalid("Reference already exists")
        repo.refs[ref[len("refs/"):]] = body["sha"]
        payload = self._ref_payload(repo, ref[len("refs/"):])
        return 201, {"Location": payload["url"]}, payload

    def update_ref(self, repo: Repo, ref: str, body: dict, **_: Any) -> Reply:
        self.ref_updates.append(ref)
        if ref not in repo.refs:
            return _invalid("Reference does not exist")
        repo.refs[ref] = body["sha"]
        return 200, {}, self._ref_payload(repo, ref)

    def list_pulls(self, repo: Repo, query: dict[str, str], path: str, **_: Any) -> Reply:
        state, head, base = query.get("state", "open"), query.get("head"), query.get("base")
        pulls = [p for p in reversed(repo.pulls) if state in ("all", p["state"])
                 and (head is None or head == f"{repo.owner}:{p['head']}") and (base is None or base == p["base"])]
        page, headers = self._page([self._pull_payload(repo, p, full=False) for p in pulls], query, path)
        return 200, headers, page

    def create_pull(self, repo: Repo, body: dict, **_: Any) -> Reply:
        head = body["head"].split(":", 1)[-1]
        if len(body.get("body") or "") > 65536 or len(body.get("title", "")) > 256:  # GitHub's own limits
            return _invalid("Validation Failed", {"resource": "Issue", "code": "custom",
                                                  "message": "body is too long (maximum is 65536 characters)"})
        if f"heads/{head}" not in repo.refs or f"heads/{body['base']}" not in repo.refs:
            return _invalid("Validation Failed", {"resource": "PullRequest", "field": "head", "code": "invalid"})
        if body.get("draft") and not repo.drafts:
            return _invalid("Validation Failed", {"resource": "PullRequest", "code": "custom",
                                                  "message": "Draft pull requests are not supported in this "
                                                             "repository."})
        if any(p["head"] == head and p["base"] == body["base"] and p["state"] == "open" for p in repo.pulls):
            return _invalid("Validation Failed", {"resource": "PullRequest", "code": "custom",
                                                  "message": f"A pull request already exists for {repo.owner}:{head}."})
        pull = self.add_pull(head, body["base"], body.get("title", ""), body.get("body"), repo)  # type: ignore
        pull["draft"] = bool(body.get("draft"))
        return 201, {"Location": f"{self.base_url}/repos/{repo.full_name}/pulls/{pull['number']}"}, \
            self._pull_payload(repo, pull, full=True)

    def add_labels(self, repo: Repo, number: str, body: Any, **_: Any) -> Reply:
        if not any(p["number"] == int(number) for p in repo.pulls):
            return _not_found()
        names = body.get("labels", []) if isinstance(body, dict) else body
        names = [n if isinstance(n, str) else n["name"] for n in names]
        have = repo.issue_labels.setdefault(int(number), [])
        have += [n for n in names if n not in have]
        return 200, {}, [self._label_payload(repo, n) for n in have]

    def create_comment(self, repo: Repo, number: str, body: dict, **_: Any) -> Reply:
        if not any(p["number"] == int(number) for p in repo.pulls):
            return _not_found()
        repo.comments.setdefault(int(number), []).append(body["body"])
        cid, u = next(self._ids), f"{self.base_url}/repos/{repo.full_name}"
        return 201, {"Location": f"{u}/issues/comments/{cid}"}, {
            "id": cid, "node_id": f"IC_{cid}", "url": f"{u}/issues/comments/{cid}", "body": body["body"],
            "html_url": f"https://github.com/{repo.full_name}/pull/{number}#issuecomment-{cid}",
            "user": self._user("github-actions[bot]"), "created_at": NOW, "updated_at": NOW,
            "issue_url": f"{u}/issues/{number}", "author_association": "NONE"}

    # ---- dispatch ----------------------------------------------------------------------------------------------
    def _route(self, h: BaseHTTPRequestHandler, path: str, query: dict[str, str], raw: bytes) -> Reply:
        auth = h.headers.get("Authorization", "")
        if auth not in (f"token {self.token}", f"Bearer {self.token}"):
            return 401, {}, {"message": "Bad credentials", "documentation_url": DOCS, "status": "401"}
        m = re.match(r"^/repos/([^/]+)/([^/]+)(/.*)?$", path)
        repo = self.repos.get(f"{m.group(1)}/{m.group(2)}") if m else None
        if repo is None:
            return 404, {}, {"message": "Not Found", "documentation_url": DOCS, "status": "404"}
        rest, body = m.group(3) or "", json.loads(raw) if raw else None
        for method, pattern, handler in _ROUTES:
            hit = re.fullmatch(pattern, rest)
            if hit and method == h.command:
                return handler(self, repo, *hit.groups(), query=query, body=body, path=path)
        self.violations.append(f"the double does not serve {h.command} {path}")
        return 404, {}, {"message": "Not Found", "documentation_url": DOCS}


def _not_found() -> Reply:
    return 404, {}, {"message": "Not Found", "documentation_url": DOCS, "status": "404"}


def _invalid(message: str, *errors: dict) -> Reply:
    payload: dict[str, Any] = {"message": message, "documentation_url": DOCS, "status": "422"}
    if errors:
        payload["errors"] = list(errors)
    return 422, {}, payload


_ROUTES: list[tuple[str, str, Callable[..., Reply]]] = [
    ("GET", r"", Routes.get_repo),
    ("GET", r"/actions/runs/(\d+)", Routes.get_run),
    ("GET", r"/actions/runs/(\d+)/jobs", Routes.list_jobs),
    ("GET", r"/actions/jobs/(\d+)", Routes.get_job),
    ("GET", r"/actions/jobs/(\d+)/logs", Routes.job_logs),
    ("GET", r"/git/commits/([0-9a-f]{40})", Routes.get_commit),
    ("GET", r"/git/ref/(.+)", Routes.get_ref),
    ("POST", r"/git/blobs", Routes.create_blob),
    ("POST", r"/git/trees", Routes.create_tree),
    ("POST", r"/git/commits", Routes.create_commit),
    ("POST", r"/git/refs", Routes.create_ref),
    ("PATCH", r"/git/refs/(.+)", Routes.update_ref),
    ("GET", r"/pulls", Routes.list_pulls),
    ("POST", r"/pulls", Routes.create_pull),
    ("POST", r"/issues/(\d+)/labels", Routes.add_labels),
    ("POST", r"/issues/(\d+)/comments", Routes.create_comment),
]
