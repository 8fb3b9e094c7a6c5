"""bench/realbugs_locate.py: the ranking measured on a real bug in the sandbox, its records, resume and
comparison with another run's records."""
from __future__ import annotations

import json

import realbugs_locate
from realbugs_locate import code_changes, is_developers

from bot.fix.types import CodeTarget


def test_a_class_attribute_counts_as_the_class_body_the_developers_changed():
    developer = {"yt/extractor/fb.py::FacebookIE", "yt/utils.py::js_to_json"}
    attribute = CodeTarget("yt/extractor/fb.py", "FacebookIE._VALID_URL", 3, 9, 1.0, (), kind="assignment")
    method = CodeTarget("yt/extractor/fb.py", "FacebookIE._real_extract", 20, 40, 1.0, ())
    assert is_developers(attribute, developer) and not is_developers(method, developer)
    assert is_developers(CodeTarget("yt/utils.py", "js_to_json", 1, 9, 1.0, ()), developer)


def test_a_changed_comment_is_not_a_change_of_the_code():
    base = {"m.py": b"def f(x):\n    # the doubled value\n    return x * 2\n\n\ndef g(y):\n    return y\n"}
    changed = base["m.py"].replace(b"# the doubled value", b"# twice x").replace(b"return y", b"return -y")
    assert code_changes(base, {"m.py": changed}) == {"m.py::g"}
    assert code_changes(base, {"m.py": base["m.py"].replace(b"x * 2", b"x * 3")}) == {"m.py::f"}


def test_youtube_dl_1_ranks_the_function_its_developers_fixed_first_and_resumes(shared_data, tmp_path, capsys,
                                                                                docker_client, sandbox_image):
    # the test calls match_str, a one-statement wrapper of _match_one, whose UNARY_OPERATORS hold the bug
    argv = ["--bugs", "youtube-dl-1", "--data", str(shared_data / "realbugs"), "--out", str(tmp_path / "new")]
    assert realbugs_locate.main(argv) == 0
    [record] = [json.loads(line) for line in (tmp_path / "new" / "locate.jsonl").read_text().splitlines()]
    assert record["error"] == "" and record["failing"] == 1 and record["rank"] == 1
    assert record["developer"] == ["youtube_dl/utils.py::_match_one"]
    assert record["targets"][:2] == ["youtube_dl/utils.py::_match_one", "youtube_dl/utils.py::match_str"]
    assert not (tmp_path / "new" / "work" / "youtube-dl-1" / "bug").exists()  # the worktrees are gone
    out = capsys.readouterr().out
    assert "[1/1] youtube-dl-1: rank 1 of" in out and "all" in out.splitlines()[-1]
    # recorded: skipped next time; compared with another run's records, the difference is printed
    (tmp_path / "old").mkdir()
    (tmp_path / "old" / "locate.jsonl").write_text(json.dumps({**record, "rank": 2}) + "\n")
    assert realbugs_locate.main([*argv, "--against", str(tmp_path / "old")]) == 0
    out = capsys.readouterr().out
    assert "0 to locate" in out and "youtube-dl-1: rank 2 -> 1" in out


def test_an_unknown_bug_is_one_line_and_exit_2(shared_data, tmp_path, capsys):
    assert realbugs_locate.main(["--bugs", "nope-1", "--data", str(shared_data / "realbugs"),
                                 "--out", str(tmp_path)]) == 2
    assert capsys.readouterr().err.startswith("realbugs_locate.py: error: --bugs: unknown bug id(s) nope-1")
