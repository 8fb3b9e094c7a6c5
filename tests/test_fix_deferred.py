"""A fix that looks wrong (bot/agent/antipatterns.py) is deferred: the run looks on for another, and keeps the
deferred one, flagged, only when nothing else fixes its tests (bot/fix/loop/deferred.py). The pipeline with the
mutation search and a scripted model, in the real sandbox."""
from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from bot.agent.options import SearchOptions
from bot.checkout.repository import Checkout
from bot.fix.loop.deferred import defer, fall_back, until
from bot.fix.loop.work import Work
from bot.fix.result import TargetRepair
from bot.fix.types import CodeTarget

from .test_agent_antipatterns import CLEAN_WIDTH as CLEAN
from .test_agent_antipatterns import WIDTH
from .test_fix import ByNameLLM, fix_example

# the one one-edit fix the search has is `char <= ' '`, which shadows the newline branch
TESTS = ("from width import width\n\n\ndef test_spaces():\n    assert width('  x') == 2\n\n\n"
         "def test_tab():\n    assert width('\\t x') == 5\n\n\n"
         "def test_form_feed():\n    assert width('\\x0c  x') == 3\n")


def project(root: Path) -> Path:
    (root / "tests").mkdir(parents=True)
    (root / "width.py").write_text(WIDTH)
    (root / "tests" / "test_width.py").write_text(TESTS)
    return root


def test_a_fix_that_looks_wrong_gives_way_to_a_clean_one_and_is_kept_flagged_only_when_nothing_else_fixes_it(
        tmp_path, docker_client, sandbox_image):
    llm = ByNameLLM({"width": CLEAN})
    result, _ = fix_example(docker_client, sandbox_image, project(tmp_path / "clean"), llm, search=SearchOptions())
    assert result.status == "fixed", result.message
    kept = [r for r in result.repairs if r.status == "fixed"]
    assert [(r.made_by, r.anti_patterns) for r in kept] == [("model", ())] and llm.asked
    [deferred] = [r for r in result.repairs if r.stop_reason == "deferred"]
    assert deferred.status == "not_fixed" and deferred.anti_patterns == ("shadows-branch",)
    assert "x0c" in result.diff and "<=" not in result.diff

    alone = ByNameLLM({})  # the model has nothing: the deferred fix is all there is
    result, _ = fix_example(docker_client, sandbox_image, project(tmp_path / "alone"), alone, search=SearchOptions())
    assert result.status == "fixed", result.message
    [kept] = [r for r in result.repairs if r.status == "fixed"]
    assert kept.made_by == "search" and kept.anti_patterns == ("shadows-branch",) and alone.asked
    assert "char <= ' '" in result.diff


def repair(path: str, fixed: str, tests: tuple[str, ...] = ("t::a",), rules=("shadows-branch",)) -> TargetRepair:
    return TargetRepair(target=CodeTarget(path, "f", 1, 2, 1.0), tests=tests, status="fixed", stop_reason="passed",
                        attempts=(), changed_lines=1, wall_s=1.0, original="def f(): pass\n", fixed=fixed,
                        made_by="search", anti_patterns=rules)


def work_on(*paths: str) -> Work:
    files = {p: b"def f(): pass\n" for p in paths}
    work = Work(Checkout("/r", files), dict(files))
    work.remaining = frozenset({"t::a", "t::b"})
    return work


SAY = SimpleNamespace(say=print)


def test_a_deferred_fix_is_kept_after_another_files_fix_and_only_while_its_own_file_is_as_it_was_found():
    work = work_on("a.py", "b.py")
    assert not defer(SAY, work, repair("a.py", "x", rules=()))  # a clean fix is not deferred
    assert defer(SAY, work, repair("a.py", "wrong a")) and defer(SAY, work, repair("b.py", "wrong b", ("t::b",)))
    assert until(work, 100.0) == 100.0 - 2 * 10.0  # each deferred fix's verification kept back
    work.files = {**work.files, "b.py": b"def f(): return 2\n"}  # a clean fix of b.py kept meanwhile
    verified = []
    fall_back(SAY, work, lambda r: verified.append(r.fixed) or r)
    assert verified == ["wrong a"] and work.deferred == []
    assert [(r.fixed, r.status, r.stop_reason) for r in work.repairs] == [
        ("wrong a", "fixed", "passed"), ("wrong b", "not_fixed", "deferred")]


def test_the_same_deferred_change_found_again_keeps_its_turn_and_a_failed_verification_keeps_the_rest():
    work = work_on("a.py")
    assert defer(SAY, work, repair("a.py", "wrong")) and defer(SAY, work, repair("a.py", "wrong"))
    assert len(work.deferred) == 1 and [r.stop_reason for r in work.repairs] == ["deferred"]
    defer(SAY, work, repair("a.py", "wrong too"))

    def stopped(r: TargetRepair) -> TargetRepair:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        fall_back(SAY, work, stopped)
    assert [r.stop_reason for r in work.repairs] == ["deferred"] * 3 and work.deferred == []
