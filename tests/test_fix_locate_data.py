"""bot.fix.locate.rank on real runs (tests/locate_run.py): targets that are not functions: a module-level dict of
lambdas, class attributes, assignments and constants, as the agent sees them and puts them back."""
from __future__ import annotations

import dataclasses
import os

from bot.fix.locate.rank import locate
from bot.fix.locate.spans import Span, replace_span
from bot.fix.repair.briefing import agent_target, blamed_tests

from .locate_run import run_repo, where

CONVERT = {
    "pkg/__init__.py": "",
    "pkg/convert.py": '''\
import re

_UNITS = re.compile(r"(\\\\d+)([a-z]+)")

_CONVERT = {
    "int": lambda s: int(s),
    "hex": lambda s: int(s, 10),
    "oct": lambda s: int(s, 8),
}


def convert(kind, text):
    return _CONVERT[kind](text)
''',
    "tests/test_convert.py": '''\
from pkg.convert import convert


def test_int():
    assert convert("int", "12") == 12


def test_hex():
    assert convert("hex", "ff") == 255
''',
}


def test_a_bug_in_a_lambda_of_a_module_level_dict_targets_the_dict(tmp_path):
    checkout, run = run_repo(tmp_path, CONVERT)
    [failure] = run.failures
    assert (failure.traceback[-1].path, failure.traceback[-1].line) == ("pkg/convert.py", 7)  # in <lambda>
    targets = locate(checkout, run, run.failures)
    assert where(targets)[:2] == ["pkg/convert.py::_CONVERT", "pkg/convert.py::convert"]
    table = targets[0]
    assert (table.kind, table.start, table.end) == ("assignment", 5, 9)
    assert table.reasons[0] == "raised here (deepest project frame)"
    assert "ochiai 1.00 (1 failing, 0 passing tests ran it)" in table.reasons  # only the `hex` lambda's line
    assert targets[1].kind == "function"


def test_a_lambda_that_returns_a_wrong_value_is_found_by_its_coverage(tmp_path):
    files = {**CONVERT, "tests/test_convert.py": CONVERT["tests/test_convert.py"].replace('"ff") == 255',
                                                                                             '"10") == 16')}
    checkout, run = run_repo(tmp_path, files)
    [failure] = run.failures
    assert failure.error_type == "AssertionError" and failure.traceback[-1].path == "tests/test_convert.py"
    targets = locate(checkout, run, run.failures)
    # the table's lambda ran in the failing test alone; `convert` also in the passing one; `_UNITS` never
    assert where(targets) == ["pkg/convert.py::_CONVERT", "pkg/convert.py::convert"]
    assert targets[0].reasons == ("ochiai 1.00 (1 failing, 0 passing tests ran it)", "read by convert")
    # module-level lines run at import: coverage that credits them to a test must not make a constant a suspect
    everyone = run.passed | run.failed
    noisy = {p: {**lines, 3: everyone, 5: everyone} for p, lines in run.coverage.items()}
    assert locate(checkout, dataclasses.replace(run, coverage=noisy), run.failures) == targets


UNITS = {
    "geo/__init__.py": "",
    "geo/units.py": '''\
class Length:
    BASE = "m"
    FACTORS = {
        "km": lambda v: v * 1000,
        "cm": lambda v: v * 100,
    }
    SIDES: dict = {"square": 3, "triangle": 3}

    def to_metres(self, unit, value):
        return self.FACTORS[unit](value)
''',
    "tests/test_units.py": '''\
from geo.units import Length


def test_km():
    assert Length().to_metres("km", 2) == 2000


def test_cm():
    assert Length().to_metres("cm", 250) == 2.5


def test_sides():
    assert Length.SIDES["square"] == 4
''',
}


def test_class_attributes_are_targets(tmp_path):
    checkout, run = run_repo(tmp_path, UNITS)
    assert run.failed == {"tests/test_units.py::test_cm", "tests/test_units.py::test_sides"}
    cm = [f for f in run.failures if f.test_id.endswith("test_cm")]
    targets = locate(checkout, run, cm)
    assert where(targets)[:2] == ["geo/units.py::Length.FACTORS", "geo/units.py::Length.to_metres"]
    assert (targets[0].kind, targets[0].start, targets[0].end) == ("assignment", 3, 6)
    # an assertion that names the attribute: nothing ran, nothing raised, the name is the evidence
    sides = [f for f in run.failures if f.test_id.endswith("test_sides")]
    [target] = locate(checkout, dataclasses.replace(run, coverage=None), sides)
    assert (where([target]), target.kind, target.start) == (["geo/units.py::Length.SIDES"], "assignment", 7)
    assert target.reasons == ("called by tests/test_units.py::test_sides",)


def test_an_assignment_target_as_the_agent_sees_it(tmp_path):
    checkout, run = run_repo(tmp_path, UNITS)
    target = locate(checkout, run, [f for f in run.failures if f.test_id.endswith("test_cm")])[0]
    seen = agent_target(checkout.files, target)
    assert seen.name == "FACTORS" and seen.source.startswith("FACTORS = {\n    \"km\"")
    assert "class Length:" in seen.context.splitlines()
    relative = {os.path.relpath(p, checkout.root): lines for p, lines in run.coverage.items()}  # as the probe's
    assert blamed_tests(target, dataclasses.replace(run, coverage=relative), run.failed) == {
        "tests/test_units.py::test_cm"}  # its lambda ran there, test_sides never did
    span = Span(target.qualname, target.start, target.end, target.kind)
    text = checkout.text(target.path)
    assert replace_span(text, span, seen.source) == text
    fixed = replace_span(text, span, seen.source.replace("v * 100", "v / 100"))
    assert fixed == text.replace("v * 100", "v / 100")


def test_a_constant_read_by_the_suspect_function_comes_right_after_it(tmp_path):
    files = {"pkg/__init__.py": "",
             "pkg/money.py": "RATE = 10\nOTHER = 3\nLAST = None\n\n\ndef cents(units):\n    global LAST\n"
                             "    LAST = units\n    return units * RATE if LAST is not None else 0\n\n\n"
                             "def euros(cents):\n    return cents / 100\n",
             "pkg/other.py": "RATE = 100\n",
             "tests/test_money.py": "from pkg.money import cents, euros\n\n\ndef test_cents():\n"
                                    "    assert cents(2) == 200\n\n\ndef test_euros():\n    assert euros(100) == 1\n"}
    checkout, run = run_repo(tmp_path, files)
    targets = locate(checkout, run, run.failures)
    assert where(targets) == ["pkg/money.py::cents", "pkg/money.py::RATE"]
    assert targets[1].reasons == ("read by cents",) and targets[1].kind == "assignment"  # not LAST = None
    # no coverage: a named function has no frame or spectrum score, and reads make nobody a suspect
    assert where(locate(checkout, dataclasses.replace(run, coverage=None), run.failures)) == ["pkg/money.py::cents"]


EXTRACTORS = {
    "ydl/__init__.py": "",
    "ydl/common.py": '''\
import re


class InfoExtractor:
    _VALID_URL = None

    @classmethod
    def suitable(cls, url):
        return re.match(cls._VALID_URL, url) is not None
''',
    "ydl/facebook.py": '''\
from ydl.common import InfoExtractor


class FacebookIE(InfoExtractor):
    _VALID_URL = r"https?://(?:www\\.)?facebook\\.com/(?:[^#?]*\\#!/)?photo\\.php\\?v=(?P<id>\\d+)"
''',
    "ydl/youtube.py": '''\
from ydl.common import InfoExtractor


class YoutubeIE(InfoExtractor):
    _VALID_URL = r"https?://(?:www\\.)?youtube\\.com/watch\\?v=(?P<id>\\w+)"

    @classmethod
    def suitable(cls, url):
        return "list=" not in url and super().suitable(url)
''',
    "test/test_all_urls.py": '''\
from ydl.facebook import FacebookIE
from ydl.youtube import YoutubeIE


def test_youtube_matching():
    assert YoutubeIE.suitable("https://www.youtube.com/watch?v=abc")


def test_facebook_matching():
    assert FacebookIE.suitable("https://www.facebook.com/Shiniknoh?fref=ts#!/photo.php?v=10153317450565268")
''',
}


def test_a_class_attribute_read_by_the_base_class_when_the_test_names_the_class(tmp_path):
    checkout, run = run_repo(tmp_path, EXTRACTORS)
    assert run.failed == {"test/test_all_urls.py::test_facebook_matching"}
    targets = locate(checkout, run, run.failures, limit=5)
    # the base's `suitable` ran (in the passing test too), FacebookIE's pattern is what it read for this test;
    # (it shadows the base's own); YoutubeIE's is read by the same code, but the failing test does not name it
    assert where(targets) == ["ydl/common.py::InfoExtractor.suitable", "ydl/facebook.py::FacebookIE._VALID_URL",
                              "ydl/youtube.py::YoutubeIE.suitable"]
    assert targets[1].reasons == ("read by InfoExtractor.suitable",)


def test_the_named_classs_attribute_comes_before_code_that_merely_ran_in_every_test(tmp_path):
    """youtube-dl-36: the extractors' registry ran in every test (a lower Ochiai than `suitable`, but not 0); the
    pattern of the class the failing test names must still come right after `suitable`, within 2 targets."""
    files = dict(EXTRACTORS)
    files["ydl/common.py"] += "\n\ndef registry():\n    return [InfoExtractor]\n"
    files["test/test_all_urls.py"] = files["test/test_all_urls.py"].replace(
        "from ydl.youtube import YoutubeIE\n", "from ydl.youtube import YoutubeIE\nfrom ydl.common import registry\n"
    ).replace("def test_youtube_matching():\n", "def test_youtube_matching():\n    registry()\n").replace(
        "def test_facebook_matching():\n", "def test_facebook_matching():\n    registry()\n"
    ) + "\n\ndef test_registry():\n    assert registry()\n"
    checkout, run = run_repo(tmp_path, files)
    assert run.failed == {"test/test_all_urls.py::test_facebook_matching"}
    targets = locate(checkout, run, run.failures, limit=3)
    assert where(targets)[:3] == ["ydl/common.py::InfoExtractor.suitable", "ydl/facebook.py::FacebookIE._VALID_URL",
                                  "ydl/common.py::registry"]


def test_a_module_constant_named_in_the_assertion(tmp_path):
    files = {"pkg/__init__.py": "", "pkg/limits.py": "MAX_ITEMS = 9\nMIN_ITEMS = 1\n",
             "tests/test_limits.py": "from pkg.limits import MAX_ITEMS\n\n\n"
                                     "def test_max():\n    assert MAX_ITEMS == 10\n"}
    checkout, run = run_repo(tmp_path, files)
    [target] = locate(checkout, run, run.failures)
    assert (target.path, target.qualname, target.kind, target.start, target.end) == (
        "pkg/limits.py", "MAX_ITEMS", "assignment", 1, 1)
    # a name the test binds itself is not the project's constant
    own = files["tests/test_limits.py"].replace("from pkg.limits import MAX_ITEMS", "MAX_ITEMS = 9")
    checkout, run = run_repo(tmp_path / "own", {**files, "tests/test_limits.py": own})
    assert locate(checkout, run, run.failures) == []
