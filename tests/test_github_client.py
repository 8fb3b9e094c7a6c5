"""bot.github.client against the GitHub double over real HTTP: a failed run, its jobs, its log (through the
302 to another origin, without the token), retries for each transient fault, one-line errors, no token leaks."""
from __future__ import annotations

import logging
import time

import pytest
import requests

from bot.errors import UserError
from bot.github import GitHubError, RetrySettings, connect, redact
from tests.github_double import GitHubDouble, github_double  # noqa: F401  (the fixture)

FAST = RetrySettings(total=4, backoff_factor=0.05, backoff_max=0.5, secondary_rate_wait=1.0,
                     max_rate_limit_wait=5.0, timeout_s=5, log_attempts=3, seconds_between_requests=0,
                     seconds_between_writes=0)
LOG = ("2026-11-22T10:00:01.0000000Z ============ FAILURES ============\n"
       "2026-11-22T10:00:01.0000000Z FAILED tests/test_gradebook.py::test_band - AssertionError: assert 'B' == 'A'\n")


def open_repo(double: GitHubDouble, **kw):
    return connect(double.token, repo=double.repo.full_name, base_url=double.base_url, retry=FAST, **kw)


@pytest.fixture
def run(github_double: GitHubDouble) -> dict:
    """A pull request's red run: a passing lint job, a failing and a timed-out test job."""
    d = github_double
    d.seed({"src/gradebook.py": b"def letter_grade(s):\n    return 'B'\n"})
    head = d.seed({"src/gradebook.py": b"def letter_grade(s):\n    return 'C'\n"}, branch="feature/bands")
    d.add_pull("feature/bands", "main", "Bands", "Adds bands")
    run_id = d.add_run(head, head_branch="feature/bands", event="pull_request", pulls=(1,))
    d.add_job(run_id, "lint", "success", "all good\n")
    tests = d.add_job(run_id, "tests (3.11)", "failure", LOG + f"echo {d.token}\n")
    slow = d.add_job(run_id, "tests (3.12)", "timed_out", "...\n")
    return {"id": run_id, "head": head, "tests": tests, "slow": slow}


def test_reads_the_failed_run_its_failed_jobs_and_a_log(github_double: GitHubDouble, run: dict):
    with open_repo(github_double) as repo:
        assert (repo.full_name, repo.owner, repo.default_branch) == ("octo-org/gradebook", "octo-org", "main")
        info = repo.failed_run(run["id"])
        assert info.head_sha == run["head"] and info.head_branch == "feature/bands"
        assert (info.event, info.conclusion, info.pull_requests) == ("pull_request", "failure", (1,))
        assert info.head_repo_full_name == "octo-org/gradebook"
        assert info.html_url.endswith(f"/actions/runs/{run['id']}")
        assert [(j.id, j.conclusion) for j in repo.failed_jobs(run["id"])] == [
            (run["tests"], "failure"), (run["slow"], "timed_out")]
        log = repo.job_log(run["tests"])
    assert "FAILED tests/test_gradebook.py::test_band" in log
    assert github_double.token not in log and "echo ***" in log  # even a token echoed into the log is masked
    # The API saw the token; the log host, another origin, saw one request and no Authorization header.
    assert all(s.authorization == f"token {github_double.token}" for s in github_double.seen)
    assert [s.authorization for s in github_double.log_seen] == [None]


def test_jobs_are_read_across_pages(github_double: GitHubDouble, run: dict):
    for n in range(5):
        github_double.add_job(run["id"], f"shard {n}", "failure", "x\n")
    with open_repo(github_double, per_page=2) as repo:
        assert len(repo.failed_jobs(run["id"])) == 7
    assert sum(s.path.endswith("/jobs") for s in github_double.seen) == 4  # 8 jobs in pages of 2


def test_an_expired_log_url_is_asked_for_again(github_double: GitHubDouble, run: dict):
    github_double.inject("expired", "GET", r"^/signed/jobs/")
    with open_repo(github_double) as repo:
        assert "FAILED" in repo.job_log(run["tests"])
    assert sum(s.path.endswith("/logs") for s in github_double.seen) == 2
    assert len(github_double.log_seen) == 2 and all(s.authorization is None for s in github_double.log_seen)


@pytest.mark.parametrize("kind, waits", [("rate_limit", 0.9), ("retry_after", 0.9), ("bad_gateway", 0), ("drop", 0)])
def test_transient_faults_are_retried(github_double: GitHubDouble, run: dict, kind: str, waits: float):
    with open_repo(github_double) as repo:
        github_double.inject(kind, "GET", r"/actions/runs/\d+$")
        start = time.monotonic()
        assert repo.failed_run(run["id"]).head_sha == run["head"]
        assert time.monotonic() - start >= waits  # the rate-limit reset and Retry-After are honoured
    runs = [s.status for s in github_double.seen if s.path.endswith(f"/actions/runs/{run['id']}")]
    assert runs == [{"rate_limit": 403, "retry_after": 429, "bad_gateway": 502, "drop": 0}[kind], 200]


def test_a_lasting_outage_is_one_line_error_without_the_token(github_double: GitHubDouble, run: dict):
    with open_repo(github_double) as repo:
        github_double.inject("bad_gateway", "GET", r"/actions/runs/\d+$", times=99)
        with pytest.raises(GitHubError) as caught:
            repo.failed_run(run["id"])
    message = str(caught.value)
    assert "\n" not in message and "502" in message and f"workflow run {run['id']}" in message
    assert_no_token(caught.value, github_double.token)
    assert sum(s.status == 502 for s in github_double.seen) == FAST.total + 1


def test_a_rate_limit_resetting_in_an_hour_is_an_error_not_a_nap(github_double: GitHubDouble, run: dict):
    with open_repo(github_double) as repo:
        github_double.inject("rate_limit_long", "GET", r"/actions/runs/\d+$")
        start = time.monotonic()
        with pytest.raises(GitHubError, match=r"rate limit resets in 3\d\d\d s, longer than fixbot waits"):
            repo.failed_run(run["id"])
        assert time.monotonic() - start < 2


def test_dropped_connections_every_time_end_as_a_user_error(github_double: GitHubDouble, run: dict):
    with open_repo(github_double) as repo:
        github_double.inject("drop", "GET", r"/actions/jobs/\d+/logs$", times=99)
        with pytest.raises(GitHubError, match="could not reach GitHub") as caught:
            repo.job_log(run["tests"])
    assert_no_token(caught.value, github_double.token)


def test_a_rejected_token_and_an_unknown_repository_are_user_errors(github_double: GitHubDouble):
    wrong = "ghp_" + "W" * 36
    with pytest.raises(UserError, match="rejected the token") as caught:
        connect(wrong, repo=github_double.repo.full_name, base_url=github_double.base_url, retry=FAST)
    assert_no_token(caught.value, wrong)
    with pytest.raises(GitHubError, match="404 .*not found"):
        connect(github_double.token, repo="octo-org/nope", base_url=github_double.base_url, retry=FAST)
    with pytest.raises(UserError, match="OWNER/NAME"):
        connect(github_double.token, repo="just-a-name", base_url=github_double.base_url)
    with pytest.raises(GitHubError, match="no GitHub token"):
        connect("", repo=github_double.repo.full_name, base_url=github_double.base_url)


def test_an_unknown_run_names_the_run(github_double: GitHubDouble, run: dict):
    with open_repo(github_double) as repo, pytest.raises(GitHubError, match="workflow run 424242: .*404"):
        repo.failed_run(424242)


def test_no_log_record_carries_the_token(github_double: GitHubDouble, run: dict, caplog: pytest.LogCaptureFixture):
    caplog.set_level(logging.DEBUG)  # PyGithub and urllib3 at their most talkative
    with open_repo(github_double) as repo:
        github_double.inject("rate_limit", "GET", r"/jobs$")
        repo.failed_jobs(run["id"])
        repo.job_log(run["tests"])
    assert caplog.records, "expected PyGithub/urllib3 debug records"
    assert all(github_double.token not in record.getMessage() for record in caplog.records)


def test_redact_masks_given_secrets_and_github_token_shapes():
    text = ("auth ghp_" + "a" * 36 + " then github_pat_11ABC" + "x" * 60 + " and ghs_" + "Z" * 36
            + " and my-own-secret twice: my-own-secret; gho_short stays")
    out = redact(text, ["my-own-secret", "", "ab"])
    assert out == "auth *** then *** and *** and *** twice: ***; gho_short stays"
    assert redact("ab cd", ["ab"]) == "ab cd"  # a 2-character "secret" would blank half the text: ignored


def test_the_double_reports_requests_outside_the_contract(github_double: GitHubDouble):
    """The contract check is not vacuous: a path GitHub's description lacks and a malformed body are caught."""
    auth = {"Authorization": f"token {github_double.token}"}
    requests.get(f"{github_double.base_url}/repos/octo-org/gradebook/issues/1", headers=auth, timeout=5)
    requests.post(f"{github_double.base_url}/repos/octo-org/gradebook/git/refs", json={"ref": "refs/heads/x"},
                  headers=auth, timeout=5)
    caught, github_double.violations[:] = list(github_double.violations), []
    assert any("PathNotFound" in v and "/issues/1" in v for v in caught)
    assert any("InvalidRequestBody" in v and "'sha' is a required property" in v for v in caught)


def assert_no_token(exc: BaseException, token: str) -> None:
    seen: BaseException | None = exc
    while seen is not None:  # the whole chain, in case a traceback is ever printed
        assert token not in str(seen) and token not in repr(seen.args)
        seen = seen.__cause__ or seen.__context__
