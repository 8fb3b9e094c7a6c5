"""bot.github.publish against the GitHub double over real HTTP: one branch, one commit on the failing commit,
one PR with labels and draft flag — once per failure signature, whatever faults come in between — and a body
that no repository text can turn into mentions, HTML or a broken code block."""
from __future__ import annotations

import dataclasses
import difflib
import logging
import re

import pytest
from markdown_it import MarkdownIt

from bot.agent.types import Attempt
from bot.errors import UserError
from bot.failures import Failure
from bot.fix.result import FixResult, RunSummary, TargetRepair, Timings
from bot.fix.types import CodeTarget
from bot.github import BranchConflict, RetrySettings, connect, publish, signature
from bot.github import body as render
from tests.github_double import GitHubDouble, github_double  # noqa: F401  (the fixture)

FAST = RetrySettings(total=4, backoff_factor=0.05, backoff_max=0.5, secondary_rate_wait=1.0, max_rate_limit_wait=5.0,
                     timeout_s=5, seconds_between_requests=0, seconds_between_writes=0)
PATH, TEST_ID = "src/gradebook.py", "tests/test_gradebook.py::test_band"
BEFORE = '''"""Letter grades for the course."""


def letter_grade(score: int) -> str:
    """A from 90, B from 80, C from 70, D from 60, else F."""
    if score > 90:
        return "A"
    if score >= 80:
        return "B"
    if score >= 70:
        return "C"
    if score >= 60:
        return "D"
    return "F"
'''
AFTER = BEFORE.replace("if score > 90:", "if score >= 90:")
TESTS = b'from src.gradebook import letter_grade\n\n\ndef test_band():\n    assert letter_grade(90) == "A"\n'


def git_diff(path: str, before: str, after: str) -> str:
    lines = difflib.unified_diff(before.splitlines(True), after.splitlines(True), f"a/{path}", f"b/{path}")
    return f"diff --git a/{path} b/{path}\n" + "".join(lines)


def fix_result(before: str = BEFORE, after: str = AFTER, *, explanation: str | None = None,
               failure: Failure | None = None, status: str = "fixed") -> FixResult:
    """What `fixbot fix` reports for the gradebook's off-by-one: one target, two attempts, a one-line diff."""
    target = CodeTarget(PATH, "letter_grade", 4, 14, 1.0, ("traceback frame", "ochiai 1.00"))
    failure = failure or Failure(TEST_ID, "tests/test_gradebook.py", 5, 'assert letter_grade(90) == "A"', "'A'", "'B'",
                                 "AssertionError", "AssertionError: assert 'B' == 'A'")
    attempts = (Attempt(iteration=1, node="draft", code=before, outcome="failed", feedback="assert 'B' == 'A'",
                        prompt_tokens=412, completion_tokens=58, latency_s=6.1, temperature=0.0, changed_lines=0),
                Attempt(iteration=2, node="reflect", code=after, outcome="passed", feedback="", prompt_tokens=530,
                        completion_tokens=61, latency_s=6.4, temperature=0.3, changed_lines=1))
    repair = TargetRepair(target=target, tests=(TEST_ID,), status="fixed", stop_reason="passed", attempts=attempts,
                          changed_lines=1, wall_s=12.5, original=before, fixed=after)
    runs = (RunSummary("reproduce", "pytest -q", 11, (TEST_ID,), 1.2, 1, False),
            RunSummary("verify", "pytest -q", 12, (), 1.3, 0, False))
    return FixResult(status, "octo-org/gradebook", "pytest -q", "llamacpp:bundled", "fixed letter_grade",
                     failures=(failure,), targets=(target,), repairs=(repair,), diff=git_diff(PATH, before, after),
                     changed_lines=1, runs=runs, timings=Timings(3.0, 2.5, 12.5, 18.0),
                     explanation=explanation if explanation is not None else
                     "`letter_grade` tests `score > 90`, so a score of exactly 90 falls through to B.")


@pytest.fixture
def world(github_double: GitHubDouble) -> dict:
    """main is red at `head`; a feature branch has an open PR (#1) whose run is red too."""
    d = github_double
    head = d.seed({PATH: BEFORE.encode(), "tests/test_gradebook.py": TESTS, "README.md": b"# gradebook\n"})
    feature = d.seed({PATH: BEFORE.encode(), "tests/test_gradebook.py": TESTS}, branch="feature/bands")
    d.add_pull("feature/bands", "main", "Add bands", "Adds the bands.")
    run = d.add_run(head)
    repo = connect(d.token, repo=d.repo.full_name, base_url=d.base_url, retry=FAST)
    yield {"head": head, "feature": feature, "repo": repo,
           "run_url": f"https://github.com/octo-org/gradebook/actions/runs/{run}"}
    repo.close()


def publish_fix(world: dict, result: FixResult | None = None, **kw) -> Publication:  # noqa: F821
    args = dict(base_branch="main", head_sha=world["head"], run_url=world["run_url"], labels=("fixbot", "bug"),
                draft=True, source_pr=None, files_after={PATH: AFTER.encode()})
    return publish(world["repo"], result or fix_result(), **{**args, **kw})


def fixbot_refs(d: GitHubDouble) -> dict[str, str]:
    return {r: sha for r, sha in d.repo.refs.items() if r.startswith("heads/fixbot/")}


def assert_one_clean_pr(d: GitHubDouble, world: dict, pub) -> None:
    """One new PR from one new branch whose one commit sits on the failing commit and holds the fixed file."""
    assert pub.action == "opened"
    assert d.repo.refs["heads/main"] == world["head"] and d.ref_updates == []  # base never written
    (branch, sha), = fixbot_refs(d).items()
    assert branch == f"heads/{pub.branch}" == f"heads/fixbot/{world['head'][:7]}-{signature(fix_result())}"
    assert d.commits[sha]["parents"] == [world["head"]]
    assert d.files(sha) == {**d.files(world["head"]), PATH: AFTER.encode()}  # the fix, everything else untouched
    pulls = [p for p in d.repo.pulls if p["head"] == pub.branch]
    assert len(pulls) == 1 and len(d.repo.pulls) == 2 and pulls[0]["number"] == pub.pr_number
    assert d.repo.issue_labels[pub.pr_number] == ["fixbot", "bug"]


def test_publish_opens_one_pr_with_the_fix(github_double: GitHubDouble, world: dict):
    pub = publish_fix(world)
    assert_one_clean_pr(github_double, world, pub)
    pull = github_double.repo.pulls[-1]
    assert pull["draft"] is True and pull["base"] == "main"
    assert pull["title"] == f"fixbot: fix letter_grade ({TEST_ID})"
    assert f"<!-- fixbot:signature={pub.signature} -->" in pull["body"]
    assert git_diff(PATH, BEFORE, AFTER).rstrip("\n") in pull["body"] and world["run_url"] in pull["body"]
    assert pub.pr_url == f"https://github.com/octo-org/gradebook/pull/{pub.pr_number}"
    assert github_double.repo.comments == {}  # no source PR given: no comment anywhere


def test_a_second_publish_of_the_same_failure_finds_the_first(github_double: GitHubDouble, world: dict):
    first = publish_fix(world)
    writes = len(github_double.writes())
    again = publish_fix(world)
    assert (again.action, again.pr_number, again.branch) == ("existing", first.pr_number, first.branch)
    assert len(github_double.writes()) == writes  # nothing written at all the second time
    # A later red commit with the same failure is still the same failure.
    later = github_double.seed({PATH: BEFORE.encode(), "tests/test_gradebook.py": TESTS}, branch="main")
    assert publish_fix(world, head_sha=later).action == "existing"
    assert len(github_double.repo.pulls) == 2 and len(fixbot_refs(github_double)) == 1


def test_a_renamed_branch_is_still_found_by_the_marker(github_double: GitHubDouble, world: dict):
    github_double.seed({PATH: AFTER.encode()}, branch="someone/took-it-over")
    sig = signature(fix_result())
    github_double.add_pull("someone/took-it-over", "main", "fix", f"adopted\n<!-- fixbot:signature={sig} -->")
    pub = publish_fix(world)
    assert (pub.action, pub.pr_number) == ("existing", 2) and fixbot_refs(github_double) == {}


def test_the_source_pr_gets_a_link_to_the_fix(github_double: GitHubDouble, world: dict):
    pub = publish_fix(world, base_branch="feature/bands", head_sha=world["feature"], source_pr=1)
    assert pub.action == "opened" and github_double.repo.pulls[-1]["base"] == "feature/bands"
    (comment,) = github_double.repo.comments[1]
    assert f"[#{pub.pr_number}]({pub.pr_url})" in comment and "`letter_grade`" in comment
    assert github_double.repo.refs["heads/feature/bands"] == world["feature"]


FAULTS = [  # (fault, method, path, the statuses that endpoint gave, in order; 0 = connection dropped)
    ("rate_limit", "GET", r"/pulls$", [403, 200]),  # the search before writing
    ("rate_limit", "POST", r"/git/blobs$", [403, 201]),
    ("bad_gateway", "POST", r"/git/trees$", [502, 201]),
    ("drop", "POST", r"/git/commits$", [0, 201]),
    ("drop", "GET", r"/git/commits/", [0, 200]),
    ("drop_after", "POST", r"/git/refs$", [0, 422]),  # made, answer lost: the retry meets "Reference already exists"
    ("retry_after", "POST", r"/pulls$", [429, 201]),
    ("drop_after", "POST", r"/pulls$", [0, 422]),  # opened, answer lost: the retry meets "already exists"
    ("bad_gateway", "POST", r"/issues/\d+/labels$", [502, 200]),
    ("drop_after", "POST", r"/issues/\d+/labels$", [0, 200]),  # labels added twice are added once
]


@pytest.mark.parametrize("kind, method, path, statuses", FAULTS, ids=[f"{k}-{m}-{p}" for k, m, p, _ in FAULTS])
def test_each_fault_is_retried_or_resolved_without_duplicates(github_double: GitHubDouble, world: dict, kind: str,
                                                             method: str, path: str, statuses: list[int]):
    github_double.inject(kind, method, path)
    pub = publish_fix(world)
    assert [s.status for s in github_double.seen if s.method == method and re.search(path, s.path)] == statuses
    assert pub.reason == ""  # no warnings: labels went on
    assert_one_clean_pr(github_double, world, pub)
    assert publish_fix(world).action == "existing"


def test_a_refused_label_or_comment_leaves_the_pr_standing(github_double: GitHubDouble, world: dict):
    github_double.inject("forbidden", "POST", r"/issues/\d+/labels$")
    github_double.inject("forbidden", "POST", r"/issues/\d+/comments$")
    pub = publish_fix(world, base_branch="feature/bands", head_sha=world["feature"], source_pr=1)
    assert pub.action == "opened" and len(github_double.repo.pulls) == 2
    assert ("labelling pull request #2: GitHub answered 403" in pub.reason
            and "commenting on pull request #1" in pub.reason)
    assert github_double.repo.issue_labels == {} and github_double.repo.comments == {}
    assert publish_fix(world, base_branch="feature/bands", head_sha=world["feature"]).action == "existing"


def test_a_repository_without_draft_prs_gets_a_ready_one(github_double: GitHubDouble, world: dict):
    github_double.repo.drafts = False
    pub = publish_fix(world)
    assert pub.action == "opened" and "draft pull requests are not available" in pub.reason
    assert github_double.repo.pulls[-1]["draft"] is False and len(github_double.repo.pulls) == 2


def test_a_branch_left_by_an_earlier_run_is_used_not_moved(github_double: GitHubDouble, world: dict):
    d = github_double
    files = {**d.files(world["head"]), PATH: AFTER.encode()}
    earlier = d.put_commit(d.put_tree(files), [world["head"]], "fixbot: fix letter_grade", "2026-11-21T09:00:00Z")
    branch = f"fixbot/{world['head'][:7]}-{signature(fix_result())}"
    d.repo.refs[f"heads/{branch}"] = earlier  # that run stopped before opening its PR
    pub = publish_fix(world)
    assert pub.action == "opened" and pub.branch == branch
    assert d.repo.refs[f"heads/{branch}"] == earlier and d.ref_updates == []
    assert publish_fix(world).action == "existing"


def test_a_branch_with_other_changes_is_left_alone(github_double: GitHubDouble, world: dict):
    d = github_double
    other = d.put_commit(d.put_tree({PATH: b"something else\n"}), [world["head"]], "not ours")
    branch = f"heads/fixbot/{world['head'][:7]}-{signature(fix_result())}"
    d.repo.refs[branch] = other
    with pytest.raises(BranchConflict, match="already exists with other changes") as caught:
        publish_fix(world)
    assert isinstance(caught.value, UserError) and "\n" not in str(caught.value)
    assert d.repo.refs[branch] == other and d.ref_updates == [] and len(d.repo.pulls) == 1


def test_nothing_is_published_without_a_verified_fix(github_double: GitHubDouble, world: dict):
    before = len(github_double.seen)
    result = dataclasses.replace(fix_result(), status="not_fixed", diff="")
    pub = publish_fix(world, result=result)
    assert (pub.action, pub.pr_number, pub.branch) == ("skipped", None, None)
    assert len(github_double.seen) == before


def test_bad_inputs_are_refused_before_any_call(github_double: GitHubDouble, world: dict):
    before = len(github_double.seen)
    for kw in ({"head_sha": "HEAD"}, {"base_branch": "bad branch"}, {"labels": ("x" * 51,)}):
        with pytest.raises(UserError):
            publish_fix(world, **kw)
    with pytest.raises(ValueError, match="does not match"):
        publish_fix(world, files_after={"README.md": b"x"})
    with pytest.raises(ValueError, match="hunk"):
        publish_fix(world, files_after={PATH: BEFORE.encode()})  # not the change the diff shows
    assert len(github_double.seen) == before


HOSTILE = 'x = "@octocat <img src=x onerror=alert(1)>"\n```\n</details><script>alert(1)</script>\n'


def test_the_body_keeps_repository_text_inert(github_double: GitHubDouble, world: dict):
    """Mentions, HTML and ``` fences from the repository and the model stay inside code in the stored body."""
    before = BEFORE.replace('"""A from 90', '"""Ask @octocat: ````fence```` <b>A</b> from 90')
    after = before.replace("if score > 90:", "if score >= 90:  # " + HOSTILE.splitlines()[0])
    failure = Failure(TEST_ID, "tests/test_gradebook.py", 5, "assert f() == '```'", "'```'", "'@team'",
                      "AssertionError", "cc @security-team <script>x</script>")
    result = fix_result(before, after, failure=failure, explanation="Ping @maintainers!\n" + HOSTILE)
    world["head"] = github_double.seed(
        {PATH: before.encode(), "tests/test_gradebook.py": TESTS})
    pub = publish_fix(world, result=result, files_after={PATH: after.encode()})
    text = github_double.repo.pulls[-1]["body"]
    tokens = MarkdownIt("commonmark").enable("table").parse(text)
    fences = {t.info: t.content for t in tokens if t.type == "fence"}
    assert fences["diff"].rstrip("\n") == result.diff.rstrip("\n")  # verbatim, in one block
    assert "@maintainers" in fences["text"]  # the explanation, as code
    html = [t.content.strip() for t in _walk(tokens) if t.type in ("html_block", "html_inline")]
    assert html == [f"<!-- fixbot:signature={pub.signature} -->"]  # our marker is the only HTML
    prose = [t.content for t in _walk(tokens) if t.type == "text"]
    assert not [p for p in prose if re.search(r"@\w", p)]  # no mention outside code
    assert "@\u200b" in render.title(dataclasses.replace(result, failures=(dataclasses.replace(
        failure, test_id="tests/test_x.py::test[@octocat]"),)))


def test_the_body_says_which_dependencies_the_suite_ran_held_back_at(github_double: GitHubDouble, world: dict):
    after = BEFORE.replace("if score > 90:", "if score >= 90:")
    result = dataclasses.replace(fix_result(BEFORE, after), held_back=("requests==2.3.0",))
    world["head"] = github_double.seed({PATH: BEFORE.encode(), "tests/test_gradebook.py": TESTS})
    publish_fix(world, result=result, files_after={PATH: after.encode()})
    text = github_double.repo.pulls[-1]["body"]
    assert "#### Dependencies held back" in text and "The suite ran with `requests==2.3.0`" in text


def test_a_huge_diff_is_cut_to_githubs_body_limit(github_double: GitHubDouble, world: dict):
    before = "".join(f"LIMIT_{i} = {i}\n" for i in range(4000))
    after = before.replace(" = ", " = 1 + ")  # every line changes: a diff of ~110,000 characters
    result = fix_result(before, after)
    world["head"] = github_double.seed(
        {PATH: before.encode(), "tests/test_gradebook.py": TESTS})
    pub = publish_fix(world, result=result, files_after={PATH: after.encode()})
    assert pub.action == "opened"  # the double refuses a body over 65,536 characters, as GitHub does
    text = github_double.repo.pulls[-1]["body"]
    assert len(text) <= render.BODY_LIMIT and text.rstrip().endswith(f"<!-- fixbot:signature={pub.signature} -->")
    (shown,) = [t.content for t in MarkdownIt("commonmark").parse(text) if t.type == "fence" and t.info == "diff"]
    assert result.diff.startswith(shown) and len(shown) > 40_000
    assert f"The whole change is on branch `{pub.branch}`" in text
    assert github_double.files(github_double.repo.refs[f"heads/{pub.branch}"])[PATH] == after.encode()


def test_tokens_in_the_result_never_reach_github_or_the_logs(github_double: GitHubDouble, world: dict,
                                                            caplog: pytest.LogCaptureFixture):
    caplog.set_level(logging.DEBUG)
    token = github_double.token
    result = fix_result(explanation=f"the test printed GITHUB_TOKEN={token} and ghp_{'q' * 36}")
    github_double.inject("bad_gateway", "POST", r"/pulls$")
    publish_fix(world, result=result)
    stored = [github_double.repo.pulls[-1]["body"], github_double.repo.pulls[-1]["title"]]
    stored += [c["message"] for c in github_double.commits.values()]
    assert not [s for s in stored if token in s or "ghp_qqq" in s]
    assert "GITHUB_TOKEN=***" in stored[0]
    assert all(token not in r.getMessage() for r in caplog.records)


def test_the_signature_is_the_failure_not_the_attempt():
    base = fix_result()
    assert signature(base) == signature(dataclasses.replace(base, explanation="other words", model="openai:x",
                                                            diff=git_diff(PATH, BEFORE, BEFORE + "\n")))
    other_test = dataclasses.replace(base.failures[0], test_id="tests/test_gradebook.py::test_other")
    assert signature(base) != signature(dataclasses.replace(base, failures=(other_test,)))
    # another test failing in the sandbox only (not one the fix is for) is the same failure
    assert signature(dataclasses.replace(base, failing=(TEST_ID,))) == signature(dataclasses.replace(
        base, failures=(*base.failures, other_test), failing=(TEST_ID,))) == signature(base)
    assert re.fullmatch(r"[0-9a-f]{12}", signature(base))


def _walk(tokens):
    for token in tokens:
        yield token
        yield from _walk(token.children or ())


def test_markdown_primitives_cannot_be_closed_from_inside():
    from bot.github.markdown import code, fence
    assert fence("a\n````\nb", "diff").startswith("`````diff\n") and fence("x").startswith("```\n")
    assert code("a ` b") == "``a ` b``" and code("`x`") == "`` `x` ``" and code("p|q", in_table=True) == "`p\\|q`"
    assert code("one\n\ntwo") == "`one two`"  # a blank line would end the span
    assert len(code("t" * 5000)) < 310 and code("") == "(empty)"
