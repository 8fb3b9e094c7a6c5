"""bench/realbugs.py: the selection, the scoring (spans, identity, the sandbox verdict on the real youtube-dl
bundle with patches made here, so no model is needed), the summary, resumption and RESULTS.md."""
from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest
import realbugs
from realbugs_corpus import BenchError, Bug, Bundles, load_manifest, select
from realbugs_report import summarize, update_results_md
from realbugs_score import changed_spans, identical, score_bug, spans_between

REPO = Path(__file__).resolve().parents[1]


def git(*args: str, cwd: Path) -> str:
    return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=cwd, check=True,
                          capture_output=True, text=True).stdout


# --- selection -------------------------------------------------------------------------------------------------

def test_the_selection_narrows_in_manifest_order_and_its_parts_cover_it_once(shared_data):
    bugs = load_manifest(shared_data / "realbugs")
    assert len(bugs) == 123 and len(select(bugs, project="youtube-dl")) == 43
    assert {b.split for b in bugs} == {"dev", "holdout"} and sum(b.split == "dev" for b in bugs) == 102
    assert [b.id for b in select(bugs, project="youtube-dl", part="1/43")] == ["youtube-dl-1"]
    assert [b.id for b in select(bugs, ids="youtube-dl-7,httpie-2")] == ["httpie-2", "youtube-dl-7"]
    parts = [select(bugs, project="youtube-dl", part=f"{k}/4") for k in range(1, 5)]
    assert [b for p in parts for b in p] == select(bugs, project="youtube-dl") and all(parts)
    bug = select(bugs, ids="youtube-dl-15")[0]
    assert bug.test_cmd == "pytest test/test_utils.py" and len(bug.pytest_ids) == 2 and bug.fix_tag == "fix-15"


def test_a_bug_that_needs_a_users_setup_carries_it_and_the_others_none(shared_data):
    bugs = {b.id: b for b in load_manifest(shared_data / "realbugs")}
    assert any("pytest<3.6" in command for command in bugs["httpie-1"].setup)
    assert [b.id for b in bugs.values() if b.setup] == ["httpie-1"]


def test_fixbot_runs_with_the_bugs_user_setup_and_the_reports_say_so(shared_data, tmp_path):
    bug = select(load_manifest(shared_data / "realbugs"), ids="httpie-1")[0]
    args = realbugs.parse_args(["--fixbot-args=--no-search", "--out", str(tmp_path)])
    cmd = realbugs.fixbot_command(bug, tmp_path / "repo", tmp_path / "out", args)
    assert cmd[cmd.index("--setup") + 1] == bug.setup[0] and "--no-search" in cmd
    assert cmd[cmd.index("--test-cmd") + 1] == "pytest tests/test_downloads.py"
    assert "--setup" not in realbugs.fixbot_command(select(load_manifest(shared_data / "realbugs"),
                                                           ids="youtube-dl-1")[0], tmp_path, tmp_path, args)
    summary = summarize([{**RECORDS[0], "id": "httpie-1", "project": "httpie", "user_setup": list(bug.setup)}])
    assert summary["user_setup"] == {"httpie-1": list(bug.setup)}
    assert realbugs.console_table(summary).splitlines()[-1].startswith(
        "with a user's setup (bench/realbugs_settings.yml) · httpie-1: pip install")


@pytest.mark.parametrize("settings, message", [
    ("httpie-1:\n  setup: pip install .\n", "httpie-1: each bug needs a `setup` list of shell commands"),
    ("httpie-1: pip install .\n", "httpie-1: each bug needs a `setup` list"),
    ("- httpie-1\n", "settings.yml: map each bug id to its settings"),
    ("httpie-1: [\n", "settings.yml: while parsing"),
])
def test_bad_user_settings_are_a_bench_error(shared_data, tmp_path, settings, message):
    path = tmp_path / "settings.yml"
    path.write_text(settings)
    with pytest.raises(BenchError, match=message.replace("(", r"\(").replace(")", r"\)")):
        load_manifest(shared_data / "realbugs", path)


@pytest.mark.parametrize("kwargs, message", [
    ({"ids": "youtube-dl-1,youtube-dl-99"}, "--bugs: unknown bug id(s) youtube-dl-99"),
    ({"part": "3/2"}, "--part '3/2': use K/N with 1 <= K <= N"),
    ({"part": "0/2"}, "--part '0/2'"),
    ({"project": "django"}, "--project 'django': choose from PySnooper, black, httpie, luigi, tornado, youtube-dl"),
    ({"ids": "httpie-1", "project": "youtube-dl"}, "no bug selected"),
])
def test_a_bad_selection_is_a_bench_error(shared_data, kwargs, message):
    with pytest.raises(BenchError, match="^" + message.replace("(", r"\(").replace(")", r"\)")):
        select(load_manifest(shared_data / "realbugs"), **kwargs)


def test_bad_arguments_are_one_line_and_exit_2(shared_data, tmp_path):
    for args in (["--bugs", "youtube-dl-99"], ["--part", "5/4"], ["--wall", "-1"]):
        r = subprocess.run([sys.executable, "bench/realbugs.py", *args, "--out", str(tmp_path)], cwd=REPO,
                           capture_output=True, text=True, timeout=120)
        assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1, r.stderr
        assert r.stderr.startswith("realbugs.py: error: ") and not list(tmp_path.glob("results.jsonl"))


# --- spans and identity ----------------------------------------------------------------------------------------

MODULE = '''import re

LIMIT = 3
OPS = {
    "<": lambda a, b: a < b,
    ">": lambda a, b: a > b,
}


class Cart:
    tax = 0.2

    def total(self, prices):
        return sum(prices) * (1 + self.tax)


def helper(x):
    return x + 1
'''


def test_spans_name_functions_methods_class_bodies_and_module_tables():
    assert changed_spans(MODULE, MODULE.replace("a < b", "a <= b")) == {"OPS"}
    assert changed_spans(MODULE, MODULE.replace("tax = 0.2", "tax = 0.25")) == {"Cart"}
    assert changed_spans(MODULE, MODULE.replace("* (1 + self.tax)", "* (1.0 + self.tax)")) == {"Cart.total"}
    assert changed_spans(MODULE, MODULE.replace("    return x + 1\n", "    y = x\n    return y + 1\n")) == {"helper"}
    assert changed_spans(MODULE, MODULE + "\n\ndef added():\n    pass\n") == {"added"}
    assert changed_spans(MODULE, MODULE.replace("import re\n", "import re\nimport os\n")) == {"<module>"}
    assert changed_spans(MODULE, MODULE.replace("LIMIT = 3\n", "LIMIT = 3\n\n")) == set()  # a blank line: nothing


@pytest.fixture
def two_tags(tmp_path) -> tuple[Bundles, Bug]:
    """A project with tags bug-1 and fix-1 (the fix changes `helper`), as a bundle like the corpus's."""
    src = tmp_path / "src"
    (src / "tests").mkdir(parents=True)
    (src / "calc.py").write_text(MODULE)
    (src / "tests" / "test_calc.py").write_text("from calc import helper\n\n\ndef test_helper():\n"
                                                "    assert helper(1) == 3\n")
    git("init", "-q", cwd=src)
    git("add", ".", cwd=src)
    git("commit", "-qm", "bug", cwd=src)
    git("tag", "bug-1", cwd=src)
    (src / "calc.py").write_text(MODULE.replace("return x + 1", "return x + 2"))
    git("commit", "-qam", "fix", cwd=src)
    git("tag", "fix-1", cwd=src)
    data = tmp_path / "data"
    data.mkdir()
    git("bundle", "create", "-q", str(data / "proj.bundle"), "--tags", cwd=src)
    bug = Bug("proj-1", "proj", 1, ("tests/test_calc.py",), ("tests/test_calc.py::test_helper",), ("calc.py",))
    return Bundles(data, tmp_path / "cache"), bug


def _files(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*.py")}


def test_the_developers_fix_is_identical_to_itself_reformatted_and_not_to_another_change(two_tags, tmp_path):
    bundles, bug = two_tags
    base = _files(bundles.checkout("proj", "bug-1", tmp_path / "b"))
    fix = _files(bundles.checkout("proj", "fix-1", tmp_path / "f"))
    assert spans_between(base, fix) == {"calc.py::helper"}
    text = fix["calc.py"].decode()
    reformatted = {**fix, "calc.py": text.replace("return x + 2", "return (x  +  2)  # the fix").encode()}
    other_value = {**fix, "calc.py": text.replace("return x + 2", "return 2 + x").encode()}
    elsewhere = {**base, "calc.py": MODULE.replace("tax = 0.2", "tax = 0.0").encode()}
    assert identical(base, fix, fix) and identical(base, reformatted, fix)
    assert spans_between(base, reformatted) == spans_between(base, fix)
    assert not identical(base, other_value, fix) and spans_between(base, other_value) == {"calc.py::helper"}
    assert not identical(base, elsewhere, fix) and spans_between(base, elsewhere) == {"calc.py::Cart"}
    assert not identical(base, {**fix, "extra.py": b"X = 1\n"}, fix)  # a file the developers did not touch
    assert not identical(base, base, fix)  # no change at all
    patch = bundles.diff("proj", "bug-1", "fix-1")
    assert "+++ b/calc.py" in patch and "return x + 2" in patch
    bundles.remove("proj", tmp_path / "b")
    assert not (tmp_path / "b").exists()


# --- the verdict in the sandbox, on the real bundle ------------------------------------------------------------

@pytest.fixture(scope="module")
def youtube_dl_1(shared_data, tmp_path_factory):
    data = shared_data / "realbugs"
    bug = select(load_manifest(data), ids="youtube-dl-1")[0]
    return bug, Bundles(data, tmp_path_factory.mktemp("clones"))


def _score(youtube_dl_1, patch: str, exit_code: int, tmp_path, docker_client, sandbox_image):
    bug, bundles = youtube_dl_1
    return score_bug(bug, bundles, patch, exit_code, tmp_path / "score", client=docker_client)


def test_the_developers_own_fix_scores_fixed_and_identical(youtube_dl_1, tmp_path, docker_client, sandbox_image):
    bug, bundles = youtube_dl_1
    s = _score(youtube_dl_1, bundles.diff(bug.project, bug.bug_tag, bug.fix_tag), 0, tmp_path, docker_client,
               sandbox_image)
    assert s.error == "" and s.verdict.reproduced and s.verdict.patch_applies and s.verdict.exposing_pass
    assert s.verdict.fixed and not s.verdict.regression and s.verdict.broken == ()
    assert s.same_functions and s.identical and s.fixbot_spans == ("youtube_dl/utils.py::_match_one",)
    assert s.counts["bug"]["failed"] == 1 and s.counts["patched"]["failed"] == 0
    assert not (tmp_path / "score").exists()  # the worktrees are gone
    # the same patch from a run that did not exit 0 is not a fix: fixbot must claim it
    assert not _score(youtube_dl_1, bundles.diff(bug.project, bug.bug_tag, bug.fix_tag), 1, tmp_path,
                      docker_client, sandbox_image).verdict.fixed


def test_no_patch_is_not_fixed_and_a_patch_that_breaks_a_neighbour_is_a_regression(
        youtube_dl_1, tmp_path, docker_client, sandbox_image):
    empty = _score(youtube_dl_1, "", 1, tmp_path, docker_client, sandbox_image)
    assert empty.verdict.reproduced and not empty.verdict.fixed and empty.verdict.patch_applies is None
    assert empty.same_functions is None and empty.identical is None
    bug, bundles = youtube_dl_1
    work = bundles.checkout(bug.project, bug.bug_tag, tmp_path / "work")
    subprocess.run(["git", "apply", "-"], cwd=work, input=bundles.diff(bug.project, bug.bug_tag, bug.fix_tag),
                   text=True, check=True)  # the developers' fix, and then a break of a neighbour
    utils = work / "youtube_dl" / "utils.py"
    text = utils.read_text()
    assert "def url_basename(url):\n" in text
    utils.write_text(text.replace("def url_basename(url):\n", "def url_basename(url):\n    return ''\n", 1))
    patch = git("diff", cwd=work)
    s = _score(youtube_dl_1, patch, 0, tmp_path, docker_client, sandbox_image)
    assert s.verdict.exposing_pass and not s.verdict.fixed and s.verdict.regression
    assert s.verdict.broken == ("test/test_utils.py::TestUtil::test_url_basename",)
    assert not s.same_functions and not s.identical
    assert set(s.fixbot_spans) == {"youtube_dl/utils.py::_match_one", "youtube_dl/utils.py::url_basename"}
    bad = _score(youtube_dl_1, patch.replace("url_basename", "no_such_function"), 0, tmp_path, docker_client,
                 sandbox_image)
    assert bad.verdict.patch_applies is False and not bad.verdict.fixed


# --- the summary, resumption, RESULTS.md -----------------------------------------------------------------------

def record(bug_id: str, **fields) -> dict:
    base = {"id": bug_id, "project": bug_id.rsplit("-", 1)[0], "exit_code": 1, "status": "not_fixed",
            "message": "", "reason": "", "wall_s": 100.0, "overran": False, "model_calls": 4, "reproduced": True,
            "fixed": False, "regression": False, "broken": [], "same_functions": None, "identical": None,
            "score_error": "", "commit": "abc1234"}
    return {**base, **fields}


RECORDS = [
    record("youtube-dl-1", exit_code=0, status="fixed", fixed=True, same_functions=True, identical=True, wall_s=60.0,
           model_calls=0),
    record("youtube-dl-2", exit_code=0, status="fixed", fixed=True, same_functions=False, identical=False,
           wall_s=200.0, model_calls=8),
    record("youtube-dl-3", exit_code=0, status="fixed", regression=True, broken=["t::a"], same_functions=True,
           identical=False, wall_s=300.0, model_calls=2),
    record("youtube-dl-4", exit_code=2, status="no report", reason="fixbot: error: boom", wall_s=5.0,
           model_calls=0, reproduced=False),
    record("httpie-1", reproduced=False, score_error="pytest collected no tests", overran=True, wall_s=700.0),
]


def test_the_summary_counts_per_project_and_in_all():
    s = summarize(RECORDS)
    yt = s["projects"]["youtube-dl"]
    assert (yt["total"], yt["reproduced"], yt["fixed"], yt["same_functions"], yt["identical"]) == (4, 3, 2, 1, 1)
    assert (yt["regressions"], yt["exit2"], yt["overran"]) == (1, 1, 0)
    assert yt["median_wall_s"] == 130.0 and yt["median_model_calls"] == 1.0
    assert s["projects"]["httpie"]["overran"] == 1 and s["total"]["total"] == 5 and s["total"]["fixed"] == 2
    assert s["total"]["median_wall_s"] == 200.0 and s["total"]["median_model_calls"] == 2
    assert s["exit2_reasons"] == {"youtube-dl-4": "fixbot: error: boom"}
    assert s["regressions"] == {"youtube-dl-3": ["t::a"]} and list(s["score_errors"]) == ["httpie-1"]
    assert s["statuses"] == {"fixed": 3, "no report": 1, "not_fixed": 1}
    assert summarize([])["total"]["median_wall_s"] is None


def test_recorded_bugs_are_skipped_unless_forced_and_the_last_record_counts(shared_data, tmp_path):
    results = tmp_path / "results.jsonl"
    results.write_text("".join(json.dumps(r) + "\n" for r in RECORDS)
                       + json.dumps(record("youtube-dl-4", exit_code=1)) + "\n")
    recorded = realbugs.read_results(results)
    assert recorded["youtube-dl-4"]["exit_code"] == 1 and len(recorded) == 5
    bugs = select(load_manifest(shared_data / "realbugs"), ids="youtube-dl-1,youtube-dl-5,httpie-1")
    assert [b.id for b in realbugs.to_run(bugs, recorded, force=False)] == ["youtube-dl-5"]
    assert realbugs.to_run(bugs, recorded, force=True) == bugs


def test_report_only_writes_the_summary_and_one_results_md_section_per_out(shared_data, tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in RECORDS))
    (out / "run.json").write_text(json.dumps({"model": "llamacpp:bundled", "wall": 300.0, "fixbot_args": [],
                                              "commands": ["bench/realbugs.py --wall 300"],
                                              "model_speed": {"threads": 2, "prompt_tok_s": 70.0,
                                                              "gen_tok_s": 27.0}}))
    md = tmp_path / "RESULTS.md"
    md.write_text("# Benchmark results\n\nkept\n")
    for _ in range(2):  # a second write replaces the section
        assert realbugs.main(["--report-only", "--out", str(out), "--results-md", str(md), "--json"]) == 0
    summary = json.loads((out / "summary.json").read_text())
    assert summary["bugs"] == 5 and summary["total"]["fixed"] == 2 and summary["commits"] == ["abc1234"]
    assert summary["speed_line"].startswith("model speed here: 70 prompt / 27.0 generated tok/s")
    text = md.read_text()
    assert text.startswith("# Benchmark results\n\nkept\n") and text.count(f"<!-- realbugs: {out} -->") == 1
    assert "bench/realbugs.py --wall 300" in text and "| youtube-dl | 4 | 3 | 2 | 1 | 1 | 1 | 1 | 0 | 130 | 1 |" in text
    assert "- exit 2 · youtube-dl-4: fixbot: error: boom" in text and "model speed here: 70 prompt" in text
    other = tmp_path / "other"
    other.mkdir()
    assert realbugs.main(["--report-only", "--out", str(other), "--results-md", str(md)]) == 0
    assert md.read_text().count("<!-- realbugs: ") == 2


def test_a_resume_with_another_configuration_is_refused(tmp_path, capsys):
    (tmp_path / "run.json").write_text(json.dumps({"model": "llamacpp:bundled", "wall": 300.0, "fixbot_args": []}))
    assert realbugs.main(["--bugs", "youtube-dl-1", "--wall", "600", "--out", str(tmp_path), "--no-speed"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("realbugs.py: error: ") and "use another --out" in err and "\n" not in err
    update_results_md(tmp_path / "new.md", "k", "<!-- realbugs: k -->\nx\n<!-- /realbugs: k -->\n")
    assert (tmp_path / "new.md").read_text().startswith("# Benchmark results")


# --- the bench loop: fixbot as a subprocess, resumption, SIGTERM ----------------------------------------------

@pytest.mark.docker  # a fixbot subprocess runs the sandbox
def test_the_bench_runs_fixbot_records_each_bug_skips_it_next_time_and_stops_cleanly(two_tags, tmp_path):
    """The whole loop on a small project of two tags, with a scripted model that answers the developers' fix."""
    bundles, bug = two_tags
    (bundles.data / "manifest.jsonl").write_text(json.dumps(
        {"id": bug.id, "project": bug.project, "bug": 1, "test_files": list(bug.test_files),
         "pytest_ids": list(bug.pytest_ids), "fix_files": list(bug.fix_files)}) + "\n")
    script = tmp_path / "answers.json"
    script.write_text(json.dumps(["```python\ndef helper(x):\n    return x + 2\n```"] * 20))
    out = tmp_path / "out"
    cmd = [sys.executable, "bench/realbugs.py", "--data", str(bundles.data), "--out", str(out), "--no-speed",
           "--model", f"scripted:{script}", "--wall", "120", "--fixbot-args", "--no-search --samples 1"]
    first = subprocess.run(cmd + ["--json"], cwd=REPO, capture_output=True, text=True, timeout=600)
    assert first.returncode == 0, first.stderr[-3000:]
    (r,) = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    assert (r["exit_code"], r["status"], r["fixed"], r["reproduced"]) == (0, "fixed", True, True), r
    assert r["same_functions"] and r["identical"] and r["fixbot_spans"] == ["calc.py::helper"]
    assert r["model_calls"] >= 1 and not r["regression"] and not r["overran"]
    assert "[1/1] proj-1: FIXED · fixbot exit 0 (fixed)" in first.stderr  # progress on stderr with --json
    summary = json.loads(first.stdout)
    assert summary["total"]["fixed"] == 1 and summary == json.loads((out / "summary.json").read_text())
    assert "fixbot fix" in (out / "bugs" / "proj-1" / "fixbot.log").read_text()

    again = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=120)
    assert again.returncode == 0 and "1 bug(s) selected, 0 to run, 1 already recorded" in again.stdout

    script.write_text(json.dumps(["```python\ndef helper(x):\n    return x\n```"] * 20))  # wrong: it iterates
    log = out / "bugs" / "proj-1" / "fixbot.log"
    log.unlink()
    proc = subprocess.Popen(cmd + ["--force"], cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while "repairing" not in (log.read_text() if log.exists() else "") and time.monotonic() < deadline:
        time.sleep(0.2)  # until fixbot is in its repair loop (8 wrong candidates to go)
    proc.send_signal(signal.SIGTERM)
    rest, _ = proc.communicate(timeout=120)
    assert proc.returncode == 128 + signal.SIGTERM and "interrupted (SIGTERM)" in rest
    assert len((out / "results.jsonl").read_text().splitlines()) == 1  # the stopped bug is not recorded
    report = json.loads((out / "bugs" / "proj-1" / "fixbot" / "report.json").read_text())
    assert report["status"] == "interrupted", report["message"]  # fixbot got the SIGTERM and wrote its report
    assert not [p for p in psutil.process_iter(["cmdline"]) if str(out) in " ".join(p.info["cmdline"] or ())]


def test_a_set_up_that_fails_is_recorded_on_one_line_with_the_python_chosen(two_tags, tmp_path, docker_client,
                                                                          sandbox_image):
    from realbugs_setup import reproduce_bug

    from bot.fix.environment import EnvRequest

    bundles, bug = two_tags
    r = reproduce_bug(bug, bundles, tmp_path / "where", client=docker_client,
                      request=EnvRequest(setup=("echo preparing", "echo 'no such tool' >&2; exit 3")))
    assert not r["set_up"] and not r["reproduced"] and r["python"] == "3.11" and r["python_source"] == "default"
    assert r["setup_error"].startswith("setting up the test environment failed: installing your setup command: ")
    assert "exit 3" in r["setup_error"] and r["setup_error"].endswith("no such tool")
    assert "\n" not in r["setup_error"] and r["tests"] is None and r["first_s"] is None
    assert "set-up error" in (tmp_path / "where" / "setup.log").read_text()
    assert not (tmp_path / "where" / "bug").exists() and not (tmp_path / "where" / "fix").exists()
