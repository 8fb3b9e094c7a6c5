"""`fixbot fix` as users run it: exit codes, one-line errors for bad input, --apply, --from-log, the outputs."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from bot.fix.reproduce.command import BadTestCommand, TestCommand
from bot.fix.verify.patch import PatchRejected, check_scope, file_diff

from .conftest import run_fixbot
from .fix_examples import EXAMPLES, FIXES

pytestmark = pytest.mark.timeout(600)


def one_line_error(proc, *, detail: bool = False) -> str:
    """The error's first line; only an error quoting a tool's output (pip's reasons) may add indented lines."""
    lines = proc.stderr.strip().splitlines()
    assert lines and lines[0].startswith("fixbot: error: "), proc.stderr
    assert "Traceback" not in proc.stderr
    assert len(lines) == 1 or (detail and all(line.startswith("    ") for line in lines[1:])), proc.stderr
    return proc.stderr


def script(tmp_path: Path, *answers: str) -> str:
    path = tmp_path / "answers.json"
    path.write_text(json.dumps([f"```python\n{a}```" for a in answers]))
    return f"scripted:{path}"


@pytest.mark.parametrize("text,args", [("pytest", ()), ("python -m pytest -x tests", ("-x", "tests")),
                                       ("python3 -m pytest -k 'a or b'", ("-k", "a or b")), ("", ())])
def test_test_command_takes_pytest_arguments(text, args):
    assert TestCommand.parse(text).args == args


@pytest.mark.parametrize("text,env,args", [
    ("LANG=C pytest -x", (("LANG", "C"),), ("-x",)),
    ("env PYTHONPATH=src GREETING='hi there' python -m pytest tests", (("PYTHONPATH", "src"), ("GREETING", "hi there")),
     ("tests",)),
])
def test_test_command_takes_the_environment_before_it_as_a_shell_does(text, env, args):
    command = TestCommand.parse(text)
    assert (command.env, command.args) == (env, args)
    assert TestCommand.parse(str(command)) == command


@pytest.mark.parametrize("text", ["make test", "tox", "pytest 'unclosed", "python -c 1", "LANG=C make test",
                                  "FIXBOT_SELECT=x pytest", "LANG=C"])
def test_test_command_refuses_anything_else(text):
    with pytest.raises(BadTestCommand):
        TestCommand.parse(text)


def test_scope_guard_refuses_tests_ci_and_new_files():
    ok = file_diff("a = 1\n", "a = 2\n", "pkg/mod.py")
    assert check_scope(ok, {"pkg/mod.py"}) == ["pkg/mod.py"]
    for path in ("tests/test_mod.py", ".github/workflows/ci.yml", "conftest.py", "pkg/test_x.py", "shop/tests.py",
                 "shop/cart_tests.py"):
        with pytest.raises(PatchRejected):
            check_scope(file_diff("a = 1\n", "a = 2\n", path), {path})
    with pytest.raises(PatchRejected):
        check_scope(ok, {"pkg/other.py"})
    with pytest.raises(PatchRejected):
        check_scope(file_diff("a = 1\n", "a = 2\n", "../outside.py"), {"../outside.py"})


def test_a_missing_final_newline_survives_the_round_trip(tmp_path):
    (tmp_path / "m.py").write_bytes(b"x = 1\r\ny = 2")
    diff = file_diff("x = 1\r\ny = 2", "x = 1\r\ny = 3", "m.py")
    from bot.fix.verify.patch import apply_patch

    apply_patch(diff, tmp_path)
    assert (tmp_path / "m.py").read_bytes() == b"x = 1\r\ny = 3"


def bad_repo(tmp_path: Path, kind: str) -> Path:
    root = tmp_path / kind
    root.mkdir()
    if kind == "no-python":
        (root / "index.js").write_text("console.log(1)\n")
    elif kind == "no-tests":
        (root / "lib.py").write_text("x = 1\n")
    elif kind == "large":
        (root / "lib.py").write_text("x = 1\n")
        (root / "test_lib.py").write_text("def test_x():\n    pass\n")
        (root / "blob.bin").write_bytes(b"\0" * (2 * 1024 * 1024))
    elif kind == "bad-dependency":
        (root / "lib.py").write_text("x = 1\n")
        (root / "test_lib.py").write_text("def test_x():\n    assert False\n")
        (root / "requirements.txt").write_text("fixbot-no-such-package-xyz==1.0\n")
    return root


@pytest.mark.parametrize("kind,expect", [("missing", "no such directory"), ("file", "not a directory"),
                                         ("no-python", "no Python files"), ("no-tests", "no test files"),
                                         ("large", "more than 1 MB"), ("bad-dependency", "fixbot-no-such-package-xyz")])
@pytest.mark.docker  # a fixbot subprocess runs the sandbox
def test_bad_input_is_one_line_and_exit_2(tmp_path, kind, expect):
    if kind == "missing":
        path = tmp_path / "nowhere"
    elif kind == "file":
        path = tmp_path / "f.py"
        path.write_text("x = 1\n")
    else:
        path = bad_repo(tmp_path, kind)
    proc = run_fixbot("fix", str(path), "--max-repo-mb", "1", "--out", str(tmp_path / "out"))
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert expect in one_line_error(proc, detail=kind == "bad-dependency")
    assert not (tmp_path / "out").exists()


@pytest.mark.docker  # a fixbot subprocess runs the sandbox
def test_a_test_command_that_is_not_pytest_or_that_pytest_refuses_is_exit_2(tmp_path):
    root = tmp_path / "one-module"
    shutil.copytree(EXAMPLES / "one-module", root)
    proc = run_fixbot("fix", str(root), "--test-cmd", "make test")
    assert proc.returncode == 2 and "fixbot runs pytest" in one_line_error(proc)
    proc = run_fixbot("fix", str(root), "--test-cmd", "pytest --no-such-option")
    assert proc.returncode == 2 and "--no-such-option" in one_line_error(proc)


@pytest.mark.docker  # a fixbot subprocess runs the sandbox
def test_fix_writes_outputs_and_apply_edits_only_the_buggy_function(tmp_path):
    root = tmp_path / "one-module"
    shutil.copytree(EXAMPLES / "one-module", root)
    before = (root / "gradebook.py").read_text()
    out = tmp_path / "out"
    fix = FIXES["one-module"][0]
    proc = run_fixbot("fix", str(root), "--model", script(tmp_path, fix.fixed), "--out", str(out), "--apply")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "fixed:" in proc.stdout and "applied to" in proc.stdout
    report = json.loads((out / "report.json").read_text())
    assert report["status"] == "fixed" and report["repairs"][0]["target"]["qualname"] == "letter_grade"
    assert report["timings"]["total_s"] > 0 and report["failures"][0]["test_id"].startswith("tests/")
    assert "## Patch" in (out / "report.md").read_text()
    patch = (out / "fix.patch").read_text()
    after = (root / "gradebook.py").read_text()
    changed = [(a, b) for a, b in zip(before.splitlines(), after.splitlines()) if a != b]
    assert len(changed) == 1 and ">=" in changed[0][1] and len(before.splitlines()) == len(after.splitlines())
    assert patch.count("\n-") - patch.count("\n---") == 1
    # the tree is fixed now: a second run has nothing to do, and says so with exit 3 (no stale patch left)
    proc = run_fixbot("fix", str(root), "--model", script(tmp_path), "--out", str(out))
    assert proc.returncode == 3, proc.stdout + proc.stderr
    assert not (out / "fix.patch").exists()


@pytest.mark.docker  # a fixbot subprocess runs the sandbox
def test_from_log_fixes_what_the_log_names_and_reports_what_does_not_reproduce(tmp_path):
    root = tmp_path / "one-module"
    shutil.copytree(EXAMPLES / "one-module", root)
    fix = FIXES["one-module"][0]
    test_id = "tests/test_gradebook.py::test_letter_grade_at_band_boundaries"
    log = tmp_path / "ci.log"
    log.write_text("2026-11-21T10:00:00.1234567Z ##[group]Run pytest\n"
                   f"2026-11-21T10:00:01.0000000Z \x1b[31mFAILED\x1b[0m {test_id} - assert 'B' == 'A'\n"
                   "2026-11-21T10:00:01.0000000Z ========= 1 failed, 5 passed in 0.12s =========\n")
    proc = run_fixbot("fix", str(root), "--from-log", str(log), "--model", script(tmp_path, fix.fixed),
                      "--out", str(tmp_path / "o2"))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "the CI log names 1 failing test" in proc.stdout
    log.write_text("FAILED tests/test_gradebook.py::test_no_such_test - assert 1 == 2\n"
                   "===== 1 failed in 0.1s =====\n")
    proc = run_fixbot("fix", str(root), "--from-log", str(log), "--out", str(tmp_path / "o3"))
    assert proc.returncode == 3, proc.stdout + proc.stderr
    assert "flaky" in proc.stdout
    proc = run_fixbot("fix", str(root), "--from-log", str(tmp_path / "nope.log"))
    assert proc.returncode == 2 and "nope.log" in one_line_error(proc)


@pytest.mark.docker  # a fixbot subprocess runs the sandbox
def test_a_model_failure_mid_run_keeps_the_report_and_exits_2(tmp_path):
    root = tmp_path / "one-module"
    shutil.copytree(EXAMPLES / "one-module", root)
    out = tmp_path / "out"
    proc = run_fixbot("fix", str(root), "--model", script(tmp_path, "no code here"), "--out", str(out), "--no-search",
                      "--samples", "1")
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "answer" in one_line_error(proc)  # the script ran out of answers
    report = json.loads((out / "report.json").read_text())
    assert report["status"] == "not_fixed" and report["error"] and report["failures"]
    assert len(report["repairs"][0]["attempts"]) == 1


@pytest.mark.docker  # a fixbot subprocess runs the sandbox
def test_the_search_fixes_a_one_edit_bug_with_no_model_call(tmp_path):
    root = tmp_path / "one-module"
    shutil.copytree(EXAMPLES / "one-module", root)
    out = tmp_path / "out"
    proc = run_fixbot("fix", str(root), "--model", script(tmp_path, "no code here"), "--out", str(out))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "search around the original (buggy) function" in proc.stdout and "found line" in proc.stdout
    report = json.loads((out / "report.json").read_text())
    assert report["changed_lines"] == 1 and report["repairs"][0]["attempts"] == []
    assert report["repairs"][0]["searches"][0]["fixed"] is True
    assert "## Mutation search" in (out / "report.md").read_text()


def test_the_tool_call_design_with_a_model_without_tools_is_exit_2_before_anything_runs(tmp_path):
    proc = run_fixbot("fix", str(EXAMPLES / "one-module"), "--agent", "tool-call", "--model", "transformers:some/model",
                      "--out", str(tmp_path / "out"))
    assert proc.returncode == 2 and "cannot call tools" in one_line_error(proc)
    assert not (tmp_path / "out").exists()
