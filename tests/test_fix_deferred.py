"""A fix that looks wrong (bot/agent/antipatterns.py) is deferred: the run looks on for another, and keeps the
deferred one, flagged, only when nothing else fixes its tests (bot/fix/deferred.py). The pipeline with the
mutation search and a scripted model, in the real sandbox."""
from __future__ import annotations

from pathlib import Path

from bot.agent.options import SearchOptions

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
