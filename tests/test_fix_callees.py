"""The project functions a target calls, shown to the model by their `def` lines (bot/fix/repair/callees.py)."""
from __future__ import annotations

from bot.fix.repair.briefing import agent_target
from bot.fix.types import CodeTarget

UTIL = b'''def clamp(value, low=0, high=100):
    """Value limited to [low, high]."""
    return max(low, min(value, high))


class Fetcher:
    def get(self, url, *, timeout=10):
        return url


class Other:
    def get(self, key):
        return key
'''
REPORT = b'''import json
from .util import clamp


def _fmt(x, digits):
    """A number as text, rounded."""
    return f"{x:.{digits}f}"


def score(raw, fetcher):
    fetcher.get(raw)
    value = clamp(raw, 100)
    return _fmt(value, 2) + json.dumps(len(str(value)))
'''
FILES = {"pkg/__init__.py": b"", "pkg/util.py": UTIL, "pkg/report.py": REPORT}


def test_the_model_sees_each_called_project_function_by_its_def_line():
    target = CodeTarget("pkg/report.py", "score", 10, 13, 1.0)
    context = agent_target(FILES, target).context
    assert context.splitlines() == [
        "import json", "from .util import clamp", "# the project functions it calls:",
        "def clamp(value, low=0, high=100): ...  # Value limited to [low, high].",
        "def _fmt(x, digits): ...  # A number as text, rounded."]
    # not `get`: two classes define it differently, and which one is called is not known; not json.dumps, len,
    # str: not the project's


def test_a_function_that_calls_nothing_of_the_projects_has_no_such_lines():
    target = CodeTarget("pkg/report.py", "_fmt", 5, 7, 1.0)
    assert "calls" not in agent_target(FILES, target).context
