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
import tables
from realbugs_changes import changed_spans, identical, spans_between
from realbugs_corpus import BenchError, Bug, Bundles, SuiteCommand, load_manifest, select, suite_command
from realbugs_report import console_table, summarize
from realbugs_score import SetAside, SuiteOutcome, judge, score_bug, tree_files
from rows import append_row, code_commit, read_rows, rows_path, speed_summary, stamp

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


def test_fixbot_is_given_the_whole_suite_and_the_ci_log_naming_the_exposing_tests(shared_data, tmp_path):
    from bot.failures import parse_ci_log

    bug = select(load_manifest(shared_data / "realbugs"), ids="httpie-1")[0]
    args = realbugs.parse_args(["--fixbot-args=--no-search", "--out", str(tmp_path)])
    suite = SuiteCommand("pytest --doctest-modules ./httpie ./tests", "tox.ini [testenv] commands")
    cmd = realbugs.fixbot_command(bug, tmp_path / "repo", tmp_path / "out", suite, tmp_path / "ci.log", args)
    assert cmd[cmd.index("--setup") + 1] == bug.setup[0] and "--no-search" in cmd
    assert cmd[cmd.index("--test-cmd") + 1] == suite.command and cmd[cmd.index("--from-log") + 1].endswith("ci.log")
    assert [f.test_id for f in parse_ci_log(realbugs.ci_log(bug).encode())] == list(bug.pytest_ids)
    other = select(load_manifest(shared_data / "realbugs"), ids="youtube-dl-1")[0]
    assert "--setup" not in realbugs.fixbot_command(other, tmp_path, tmp_path, suite, tmp_path, args)


def test_the_suite_command_is_what_fixbot_init_finds_in_the_checkout(shared_data, tmp_path):
    bundles = Bundles(shared_data / "realbugs", tmp_path / "clones")
    found = {}
    for bug_id in ("youtube-dl-1", "httpie-2", "luigi-3"):
        bug = select(load_manifest(shared_data / "realbugs"), ids=bug_id)[0]
        root = bundles.checkout(bug.project, bug.bug_tag, tmp_path / bug_id)
        found[bug.project] = suite_command(root)
        bundles.remove(bug.project, root)
    assert found["youtube-dl"].command == "python -m unittest discover -s test"
    assert found["httpie"].command.startswith("pytest") and found["httpie"].source.startswith("tox.ini")
    # luigi's CI runs nose (which fixbot does not); its test modules are named test_*.py and *_test.py, which one
    # unittest discovery pattern cannot both match, so the suite is pytest's
    assert found["luigi"].command == "pytest"


def test_holdout_bugs_are_never_selected_one_by_one():
    dev = Bug("p-1", "p", 1, ("t.py",), ("t.py::a",), ("a.py",))
    held = Bug("p-2", "p", 2, ("t.py",), ("t.py::b",), ("a.py",), split="holdout")
    assert select([dev, held], ids="p-1") == [dev]
    with pytest.raises(BenchError, match="holdout split is measured only as a whole"):
        select([dev, held], ids="p-1,p-2")
    assert select([dev, held], split="holdout") == [held] and select([dev, held]) == [dev, held]


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


# --- the judge's rule, on runs made here -----------------------------------------------------------------------

def outcome(passed=(), failed=(), network=(), errors=None) -> SuiteOutcome:
    return SuiteOutcome(frozenset(passed), frozenset(failed), frozenset(network), errors or {}, 1.0)


BUG = Bug("p-1", "p", 1, ("t/test_a.py",), ("t/test_a.py::test_x",), ("a.py",))


def test_the_judge_sets_aside_the_network_the_environment_and_what_the_fix_changed():
    at_bug = outcome(passed={"t/test_a.py::test_y", "t/test_b.py::old", "t/test_b.py::ok"},
                     failed={"t/test_a.py::test_x", "t/test_b.py::env", "t/test_c.py::web"},
                     network={"t/test_c.py::web"})
    at_fix = outcome(passed={"t/test_a.py::test_x", "t/test_a.py::test_y", "t/test_b.py::ok"},
                     failed={"t/test_b.py::env", "t/test_b.py::old", "t/test_c.py::web"}, network={"t/test_c.py::web"})
    good = outcome(passed={"t/test_a.py::test_x", "t/test_a.py::test_y", "t/test_b.py::ok"},
                   failed={"t/test_b.py::env", "t/test_b.py::old", "t/test_c.py::web"})
    v = judge(BUG, True, at_bug, at_fix, good, True)
    assert v.reproduced and v.why_not == "" and v.fixed and not v.regression and v.regressions == ()
    assert v.set_aside == SetAside(network=1, environment=1, changed_by_fix=1)
    broke = outcome(passed={"t/test_a.py::test_x"}, failed={"t/test_a.py::test_y", "t/test_b.py::ok"})
    v = judge(BUG, True, at_bug, at_fix, broke, True, passes_alone=frozenset({"t/test_b.py::ok"}))
    assert v.regressions == ("t/test_a.py::test_y",) and v.flaky == ("t/test_b.py::ok",)
    assert v.regression and not v.fixed and v.exposing_pass
    assert not judge(BUG, False, at_bug, at_fix, broke, True).regression  # not claimed: not accepted
    assert not judge(BUG, False, at_bug, at_fix, good, True).fixed  # fixbot must claim it (exit 0)
    assert judge(BUG, True, at_bug, at_fix, None, False).patch_applies is False


def test_why_a_bug_does_not_reproduce_is_one_line():
    at_bug = outcome(failed={"t/test_a.py::test_x"})
    offline = outcome(failed={"t/test_a.py::test_x"}, network={"t/test_a.py::test_x"})
    assert judge(BUG, False, at_bug, offline, None, None).why_not.startswith("network: t/test_a.py::test_x")
    broken = outcome(failed={"t/test_a.py"}, errors={"t/test_a.py": "ModuleNotFoundError: No module named 'yaml'"})
    why = judge(BUG, False, at_bug, broken, None, None).why_not
    assert why == "environment: t/test_a.py::test_x fails at fix-N too: ModuleNotFoundError: No module named 'yaml'"
    ours = outcome(failed={"t/test_a.py::test_x"}, errors={
        "t/test_a.py::test_x": "AttributeError: module 'a.compat' has no attribute 'PY2'"})
    assert judge(BUG, False, at_bug, ours, None, None).why_not.startswith(
        "files: t/test_a.py::test_x needs project code neither bug-N nor fix-N holds")
    theirs = outcome(failed={"t/test_a.py::test_x"}, errors={
        "t/test_a.py::test_x": "ImportError: cannot import name 'x' from 'yaml.compat'"})
    assert judge(BUG, False, at_bug, theirs, None, None).why_not.startswith("environment: ")
    passing = outcome(passed={"t/test_a.py::test_x"})
    assert judge(BUG, False, passing, passing, None, None).why_not == \
        "bug-N: the exposing test t/test_a.py::test_x passes at bug-N"
    # a module of the fix commit's tests that imports what only the fix adds fails as a whole at bug-N: reproduced
    assert judge(BUG, False, outcome(failed={"t/test_a.py"}), passing, None, None).reproduced


# --- the judge in the sandbox, on the real bundle --------------------------------------------------------------

@pytest.fixture(scope="module")
def youtube_dl_1(shared_data, tmp_path_factory):
    data = shared_data / "realbugs"
    bug = select(load_manifest(data), ids="youtube-dl-1")[0]
    bundles = Bundles(data, tmp_path_factory.mktemp("clones"))
    root = bundles.checkout(bug.project, bug.bug_tag, tmp_path_factory.mktemp("suite") / "repo")
    suite = suite_command(root)
    bundles.remove(bug.project, root)
    return bug, bundles, suite, tmp_path_factory.mktemp("cache") / "suite-runs.json"


def _score(youtube_dl_1, patch: str, claimed: bool, tmp_path, docker_client):
    bug, bundles, suite, cache = youtube_dl_1
    return score_bug(bug, bundles, suite, patch, claimed, tmp_path / "judge", client=docker_client, cache=cache)


@pytest.mark.timeout(1800)
def test_the_whole_suite_judges_the_developers_fix_fixed_and_a_broken_neighbour_a_regression(
        youtube_dl_1, tmp_path, docker_client, sandbox_image):
    bug, bundles, suite, cache = youtube_dl_1
    theirs = bundles.diff(bug.project, bug.bug_tag, bug.fix_tag)
    s = _score(youtube_dl_1, theirs, True, tmp_path, docker_client)
    v = s.verdict
    assert s.error == "" and v.reproduced and v.patch_applies and v.exposing_pass and v.fixed and not v.regression
    assert s.same_functions and s.identical and s.fixbot_spans == ("youtube_dl/utils.py::_match_one",)
    assert s.fixbot_files == s.developer_files == ("youtube_dl/utils.py",)
    assert s.counts["bug"]["passed"] > 1000  # the whole suite, not the exposing file's tests
    assert v.set_aside.network > 100  # the download tests: the sandbox has no network
    assert not (tmp_path / "judge").exists() and cache.exists()  # the worktrees are gone, the runs kept
    assert not _score(youtube_dl_1, theirs, False, tmp_path, docker_client).verdict.fixed  # fixbot must claim it

    work = bundles.checkout(bug.project, bug.bug_tag, tmp_path / "work")
    subprocess.run(["git", "apply", "-"], cwd=work, input=theirs, text=True, check=True)
    # the developers' fix, and a break of a function that only another test module tests
    utils = work / "youtube_dl" / "utils.py"
    text = utils.read_text()
    assert "def url_basename(url):\n" in text
    utils.write_text(text.replace("def url_basename(url):\n", "def url_basename(url):\n    return ''\n", 1))
    patch = git("diff", cwd=work)
    s = _score(youtube_dl_1, patch, True, tmp_path, docker_client)
    assert s.verdict.exposing_pass and not s.verdict.fixed and s.verdict.regression
    assert "test/test_utils.py::TestUtil::test_url_basename" in s.verdict.regressions
    assert not s.same_functions and not s.identical
    bad = _score(youtube_dl_1, patch.replace("url_basename", "no_such_function"), True, tmp_path, docker_client)
    assert bad.verdict.patch_applies is False and not bad.verdict.fixed
    empty = _score(youtube_dl_1, "", False, tmp_path, docker_client)
    assert empty.verdict.reproduced and empty.verdict.patch_applies is None and empty.same_functions is None


# --- rows, the summary, resumption -----------------------------------------------------------------------------

def row(bug_id: str, split: str = "dev", **fields) -> dict:
    base = {"bench": "realbugs", "commit": "abc1234", "date": "2026-12-06 10:00", "speed": "model speed here: x",
            "model": "llamacpp:bundled", "wall": 600.0, "fixbot_args": [], "id": bug_id,
            "project": bug_id.rsplit("-", 1)[0], "split": split, "verdict": "not fixed", "reproduced": True,
            "why_not_reproduced": "", "judge_error": "", "exit_code": 1, "status": "not_fixed", "reason": "",
            "seconds": 100.0, "made_by": [], "regressions": [], "identical": None, "same_functions": None,
            "set_aside": {"network": 0, "environment": 1, "changed_by_fix": 0}}
    return {**base, **fields}


ROWS = [
    row("youtube-dl-1", verdict="fixed", exit_code=0, made_by=["search"], identical=True, same_functions=True,
        seconds=60.0, families=["compare"], outcomes={"failed": 2, "unapplied": 1}, pointed={"failed": 1},
        timings={"setup_s": 10.0, "model_s": 20.0, "search_s": 5.0, "tests_s": 30.0}),
    row("youtube-dl-2", verdict="fixed", exit_code=0, made_by=["model"], identical=False, same_functions=True,
        seconds=200.0, timings={"setup_s": 30.0, "model_s": 100.0, "search_s": 50.0, "tests_s": 90.0}),
    row("youtube-dl-3", verdict="regression accepted", exit_code=0, regressions=["t::a"], seconds=300.0),
    row("youtube-dl-4", exit_code=2, reason="fixbot: error: boom", seconds=5.0),
    row("httpie-1", verdict="not reproduced", reproduced=False, why_not_reproduced="network: t tries"),
    row("proj-7", split="holdout", verdict="not reproduced", reproduced=False, why_not_reproduced="environment: x"),
    row("proj-8", split="holdout", verdict="fixed", exit_code=0, made_by=["search", "model"], families=["call"],
        outcomes={"failed": 1, "passed": 1}),
]


def test_the_summary_puts_dev_beside_holdout_per_project_and_counts_who_made_each_fix():
    s = summarize(ROWS)
    yt, dev, held = s["rows"]["dev · youtube-dl"], s["rows"]["dev · all"], s["rows"]["holdout · all"]
    assert (yt["total"], yt["fixed"], yt["rate"], yt["search"], yt["model"]) == (4, 2, "0.500", 1, 1)
    assert (yt["regressions"], yt["exit2"], yt["identical"], yt["median_s"]) == (1, 1, 1, 130.0)
    assert (dev["total"], dev["reproduced"], held["total"], held["fixed"]) == (5, 4, 2, 1)
    assert (held["search"], held["model"], s["rows"]["all"]["fixed"]) == (1, 1, 3)
    assert s["regressions"] == {"youtube-dl-3": ["t::a"]} and s["exit2"] == {"youtube-dl-4": "fixbot: error: boom"}
    assert s["not_reproduced"] == {"httpie-1": "network: t tries"}  # dev bugs one by one
    assert s["set_aside"]["environment"] == 7
    text = console_table(s)
    assert "proj-7" not in text and "proj-8" not in text  # the holdout only as counts
    assert "holdout, counted only: 1 fixed, 1 not reproduced" in text
    assert "search families of the dev fixes the search made: compare 1" in text  # the holdout's not named
    assert "model answers, over all bugs, by how they ended: failed 3, unapplied 1, passed 1" in text
    assert "of those, answers pointed at a line the model named as wrong: failed 1" in text
    # the rows that say where their time went (an older bench's do not)
    assert "median seconds per reproduced bug (2 timed): wall 130, setup 20, model 60, search 27.5" in text


def test_recorded_bugs_are_skipped_unless_forced_and_a_row_file_holds_one_configuration(shared_data, tmp_path,
                                                                                          capsys):
    rows_file = tmp_path / "realbugs-abc1234.jsonl"
    rows_file.write_text("".join(json.dumps(r) + "\n" for r in ROWS[:5])
                         + json.dumps(row("youtube-dl-4", exit_code=1)) + "\n")
    recorded = read_rows(rows_file, "id")
    assert recorded["youtube-dl-4"]["exit_code"] == 1 and len(recorded) == 5
    bugs = select(load_manifest(shared_data / "realbugs"), ids="youtube-dl-1,youtube-dl-5,httpie-1")
    assert [b.id for b in realbugs.to_run(bugs, recorded, force=False)] == ["youtube-dl-5"]
    assert realbugs.to_run(bugs, recorded, force=True) == bugs
    argv = ["--bugs", "youtube-dl-5", "--rows", str(rows_file), "--out", str(tmp_path), "--no-speed"]
    assert realbugs.main([*argv, "--wall", "300"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("realbugs.py: error: ") and "another configuration" in err and "\n" not in err
    assert realbugs.main(["--report-only", "--rows", str(rows_file), "--out", str(tmp_path)]) == 0
    assert "dev · youtube-dl" in capsys.readouterr().out


def test_rows_go_to_bench_results_at_a_clean_commit_and_beside_the_run_otherwise(tmp_path):
    assert rows_path("realbugs", "abc1234", tmp_path) == REPO / "bench" / "results" / "realbugs-abc1234.jsonl"
    assert rows_path("realbugs", "abc1234+dirty", tmp_path) == tmp_path / "realbugs-abc1234+dirty.jsonl"
    append_row(tmp_path / "x.jsonl", {"id": "a", "n": 1})
    append_row(tmp_path / "x.jsonl", {"id": "a", "n": 2})
    assert read_rows(tmp_path / "x.jsonl", "id") == {"a": {"id": "a", "n": 2}}
    commit = code_commit()
    assert len(commit.removesuffix("+dirty")) == 7


def test_a_commit_is_dirty_for_changed_code_and_not_for_rows_written_beside_it(tmp_path, monkeypatch):
    import rows
    (tmp_path / "bench" / "results").mkdir(parents=True)
    (tmp_path / "bench" / "x.py").write_text("x = 1\n")
    git("init", "-q", cwd=tmp_path)
    git("add", "-A", cwd=tmp_path)
    git("commit", "-qm", "c", cwd=tmp_path)
    monkeypatch.setattr(rows, "REPO", tmp_path)
    clean = rows.code_commit()
    assert len(clean) == 7 and "+" not in clean
    (tmp_path / "bench" / "results" / f"reproduce-{clean}.jsonl").write_text("{}\n")  # rows of a run: still clean
    assert rows.code_commit() == clean
    (tmp_path / "bench" / "x.py").write_text("x = 2\n")
    assert rows.code_commit() == clean + "+dirty"


def test_a_runs_speed_lines_over_several_sessions_are_one_range_per_setting():
    tail = "generated tok/s per process (2 thread(s) each, 1 worker(s))"
    lines = [f"model speed here: 104 prompt / 14.5 {tail}", f"model speed here: 80 prompt / 12.0 {tail}",
             f"model speed here: 87 prompt / 11.3 {tail}", f"model speed here: 80 prompt / 12.0 {tail}"]
    assert speed_summary(lines) == f"model speed here, 3 readings: 80-104 prompt / 11.3-14.5 {tail}"
    assert speed_summary(lines[:1]) == lines[0]
    assert speed_summary(["model speed: not measured", lines[1]]) == f"{lines[1]}; model speed: not measured"


def test_the_tables_come_from_the_newest_rows_and_rewrite_readmes_section(tmp_path, monkeypatch):
    results = tmp_path / "results"
    results.mkdir()
    (results / "realbugs-abc1234.jsonl").write_text("".join(json.dumps(r) + "\n" for r in ROWS))
    older = [{**r, "date": "2026-01-01 00:00", "commit": "0000000"} for r in ROWS[:1]]
    (results / "realbugs-0000000.jsonl").write_text("".join(json.dumps(r) + "\n" for r in older))
    task = {"bench": "humanevalfix-tests", "commit": "abc1234", "date": "2026-12-06 11:00", "speed": "s",
            "task_id": "Python/0", "bug_type": "value", "protocol": "tests", "eval_args": ["--search"],
            "verdict": "passed", "passed": True, "visible_passed": True, "made_by": "search", "seconds": 3.0,
            "iterations": 0, "error": None}
    (results / "humanevalfix-tests-abc1234.jsonl").write_text(
        json.dumps(task) + "\n" + json.dumps({**task, "task_id": "Python/1", "verdict": "failed",
                                              "passed": False, "made_by": None}) + "\n")
    monkeypatch.setattr(tables, "RESULTS", results)
    readme = tmp_path / "README.md"
    readme.write_text(f"# x\n\n{tables.BEGIN}\nold\n{tables.END}\n\nmore\n")
    monkeypatch.setattr(tables, "README", readme)
    assert tables.main(["--readme"]) == 0
    text = readme.read_text()
    assert "\nold\n" not in text and text.endswith(f"{tables.END}\n\nmore\n")
    assert "| dev · youtube-dl | 4 | 4 | 2 | 0.500 |" in text and "commit abc1234" in text
    assert f"{len({r['id'] for r in ROWS})} of 123 bugs so far: a run in `--part K/N` slices" in text
    assert "| 2 | 1 | 0.500 | 1 | 0 | 0 | 0 |" in text and "bench/humanevalfix.py --protocol tests" in text
    assert "proj-7" not in text


# --- the bench loop: fixbot as a subprocess, resumption, SIGTERM ----------------------------------------------

@pytest.mark.docker  # a fixbot subprocess runs the sandbox
def test_the_bench_runs_fixbot_writes_a_row_per_bug_skips_it_next_time_and_stops_cleanly(two_tags, tmp_path):
    """The whole loop on a small project of two tags, with a scripted model that answers the developers' fix."""
    bundles, bug = two_tags
    (bundles.data / "manifest.jsonl").write_text(json.dumps(
        {"id": bug.id, "project": bug.project, "bug": 1, "test_files": list(bug.test_files),
         "pytest_ids": list(bug.pytest_ids), "fix_files": list(bug.fix_files), "split": "dev"}) + "\n")
    script = tmp_path / "answers.json"
    script.write_text(json.dumps(["```python\ndef helper(x):\n    return x + 2\n```"] * 20))
    out, rows_file = tmp_path / "out", tmp_path / "rows.jsonl"
    cmd = [sys.executable, "bench/realbugs.py", "--data", str(bundles.data), "--out", str(out), "--no-speed",
           "--rows", str(rows_file), "--model", f"scripted:{script}", "--wall", "120",
           "--fixbot-args", "--no-search --samples 1"]
    first = subprocess.run(cmd + ["--json"], cwd=REPO, capture_output=True, text=True, timeout=600)
    assert first.returncode == 0, first.stderr[-3000:]
    (r,) = [json.loads(line) for line in rows_file.read_text().splitlines()]
    assert (r["exit_code"], r["status"], r["verdict"], r["reproduced"]) == (0, "fixed", "fixed", True), r
    assert r["same_functions"] and r["identical"] and r["functions"] == ["calc.py::helper"]
    assert r["made_by"] == ["model"] and r["model_calls"] >= 1 and r["regressions"] == [] and not r["overran"]
    assert r["families"] == [] and r["outcomes"].get("passed") == 1  # the model's fix, no search
    assert r["pointed"] == {}  # the first answer passed: no line was asked for
    assert set(r["timings"]) == {"setup_s", "model_s", "search_s", "tests_s"}, r  # where its time went
    assert r["timings"]["search_s"] == 0 and r["timings"]["tests_s"] > 0, r  # nothing to install: setup ~0 s
    assert r["split"] == "dev" and r["suite"]["command"] == "pytest" and r["commit"] and r["date"]
    assert "[1/1] proj-1: FIXED · fixbot exit 0 (fixed)" in first.stderr  # progress on stderr with --json
    assert json.loads(first.stdout)["rows"]["dev · all"]["fixed"] == 1
    assert "--from-log" in (out / "bugs" / "proj-1" / "fixbot.log").read_text()

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
    assert len(rows_file.read_text().splitlines()) == 1  # the stopped bug is not recorded
    report = json.loads((out / "bugs" / "proj-1" / "fixbot" / "report.json").read_text())
    assert report["status"] == "interrupted", report["message"]  # fixbot got the SIGTERM and wrote its report
    assert not [p for p in psutil.process_iter(["cmdline"]) if str(out) in " ".join(p.info["cmdline"] or ())]


def test_a_set_up_that_fails_is_recorded_on_one_line_with_the_python_chosen(two_tags, tmp_path, docker_client,
                                                                          sandbox_image):
    from realbugs_reproduce import reproduce_bug

    from bot.environment.prepare import EnvRequest

    bundles, bug = two_tags
    r = reproduce_bug(bug, bundles, tmp_path / "where", client=docker_client,
                      request=EnvRequest(setup=("echo preparing", "echo 'no such tool' >&2; exit 3")))
    assert not r["set_up"] and not r["reproduced"] and r["python"] == "3.11" and r["python_source"] == "default"
    assert r["why_not_reproduced"].startswith("set-up: setting up the test environment failed: installing your "
                                              "setup command: ") and r["cause"] == "set-up"
    assert "exit 3" in r["why_not_reproduced"] and r["why_not_reproduced"].endswith("no such tool")
    assert "\n" not in r["why_not_reproduced"] and r["setup_s"] is None
    assert "set-up error" in (tmp_path / "where" / "setup.log").read_text()


def test_bugsinpys_unittest_names_are_resolved_in_the_checkout_and_a_class_judges_by_its_tests(shared_data,
                                                                                              tmp_path):
    bugs = {b.id: b for b in load_manifest(shared_data / "realbugs")}
    bundles = Bundles(shared_data / "realbugs", tmp_path / "clones")
    bug = bugs["tornado-3"]
    root = bundles.checkout(bug.project, bug.bug_tag, tmp_path / "t")
    resolved = bug.resolved(tree_files(root))
    assert resolved.pytest_ids == ("tornado/test/httpclient_test.py::SyncHTTPClientSubprocessTest",)
    pytest_bug = bugs["luigi-3"]
    assert pytest_bug.resolved({}) is pytest_bug  # BugsInPy ran pytest: its ids stand
    cls = "tornado/test/httpclient_test.py::SyncHTTPClientSubprocessTest"
    at_bug = outcome(passed={f"{cls}::test_a"}, failed={f"{cls}::test_b"})
    at_fix = outcome(passed={f"{cls}::test_a", f"{cls}::test_b"})
    assert judge(resolved, True, at_bug, at_fix, at_fix, True).fixed
    assert not judge(resolved, True, at_bug, at_bug, None, None).reproduced


def test_a_holdout_bugs_progress_line_says_only_that_it_is_done_and_a_bench_error_is_a_row():
    line = realbugs.progress_line(3, 9, ROWS[-1])
    assert line == "[3/9] a holdout bug: done (100 s)" and "proj-8" not in line
    bug = Bug("p-1", "p", 1, ("t.py",), ("t.py::a",), ("a.py",))
    config = {"model": "m", "wall": 1.0, "fixbot_args": []}
    failed = realbugs.failed_row(bug, stamp("realbugs", "abc1234", None), config,
                                 RuntimeError("git worktree add failed\nfatal: x"))
    assert failed["verdict"] == "no verdict"
    assert failed["judge_error"] == "RuntimeError: git worktree add failed fatal: x"
    assert summarize([failed])["no_verdict"] == {"p-1": failed["judge_error"]}


def test_the_judge_names_the_wrong_fix_a_patch_looks_like():
    from realbugs_changes import patch_anti_patterns

    base = {"m.py": b"class C:\n    def get(self, k):\n        return self.d[k]\n"}
    swallowed = {"m.py": b"class C:\n    def get(self, k):\n        try:\n            return self.d[k]\n"
                         b"        except KeyError:\n            pass\n"}
    assert patch_anti_patterns(base, swallowed, "") == ("m.py::C.get: swallows-exception",)
    assert patch_anti_patterns(base, {"m.py": base["m.py"].replace(b"[k]", b".get(k)")}, "") == ()
