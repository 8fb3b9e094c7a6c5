"""Installing as of a date (bot/environment/dated.py): the cuts, and a requirement with no release for this Python
by then installed at the earliest later cut that has one, the step then run again with the date."""
from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from bot.environment.dated import MAX_LATER, install_dated, later_cuts, unmatched


@dataclass(frozen=True)
class Ran:
    ok: bool
    output: str = ""


def test_later_cuts_go_half_a_year_at_a_time_up_to_today_then_no_cut():
    cuts = later_cuts("2020-01-01T00:00:00Z", now=datetime(2021, 6, 1, tzinfo=UTC))
    assert cuts == ["2020-07-01T00:00:00Z", "2020-12-30T00:00:00Z", None]
    assert later_cuts("2020-01-01", now=datetime(2020, 2, 1, tzinfo=UTC)) == [None]


def test_a_requirement_without_a_release_for_this_python_is_placed_at_the_earliest_later_cut():
    calls: list[list[str]] = []
    placed: set[str] = set()

    def run(argv):
        calls.append(list(argv))
        if "--dry-run" in argv:  # today's releases hold one for this Python
            return Ran(True)
        if argv[3:5] == ["install", "mysql-connector>=8"]:  # the placement of the requirement alone
            ok = argv[-1] >= "2020-12"
            if ok:
                placed.add("mysql")
            return Ran(ok)
        if "mysql" in placed:
            return Ran(True)
        return Ran(False, "ERROR: No matching distribution found for mysql-connector>=8\n")

    said: list[str] = []
    result, later = install_dated(run, ["python3", "-m", "pip", "install", "-r", "deps.txt"], "2020-01-01T00:00:00Z",
                                  said.append)
    assert result.ok and later == ("mysql-connector>=8 (uploaded before 2020-12-30T00:00:00Z)",)
    assert calls[0][-2:] == ["--uploaded-prior-to", "2020-01-01T00:00:00Z"]
    assert calls[-1] == calls[0]  # the step again, with the date
    assert "has no release for this Python by 2020-01-01" in said[0]


def test_a_failure_that_is_not_a_missing_release_ends_at_once_and_the_loop_is_bounded():
    result, later = install_dated(lambda argv: Ran(False, "error: subprocess-exited-with-error\n"), ["pip"],
                                  "2020-01-01", lambda _: None)
    assert not result.ok and later == ()
    names = iter(f"pkg{i}" for i in range(100))

    def endless(argv):  # every run of the step names another requirement; each placement works
        if argv[4] != "-r":
            return Ran(True)
        return Ran(False, f"No matching distribution found for {next(names)}")

    result, later = install_dated(endless, ["python3", "-m", "pip", "install", "-r", "x"], "2020-01-01",
                                  lambda _: None)
    assert not result.ok and len(later) == MAX_LATER
    assert unmatched("x\nERROR: No matching distribution found for a>=1\n") == "a>=1" and unmatched("") is None


def test_a_requirement_no_release_satisfies_even_today_is_not_searched_for():
    """Every cut sees a part of today's releases: one dry run says no cut can help, and the step's failure stands
    (the build then loosens the requirement)."""
    calls: list[list[str]] = []

    def run(argv):
        calls.append(list(argv))
        return Ran(False, "ERROR: No matching distribution found for moto<1.0\n")

    result, later = install_dated(run, ["python3", "-m", "pip", "install", "-r", "deps.txt"], "2020-01-01T00:00:00Z",
                                  lambda _: None)
    assert not result.ok and later == ()
    assert calls[1] == ["python3", "-m", "pip", "install", "--dry-run", "--no-deps", "moto<1.0"] and len(calls) == 2
    # the index failing is not the index lacking it: the cuts are searched as before
    calls.clear()
    flaky = "WARNING: Retrying ... Max retries exceeded with url: /simple/moto/\n"
    install_dated(lambda argv: calls.append(list(argv)) or Ran(False, ("" if "-r" in argv else flaky)
                                                           + "ERROR: No matching distribution found for moto<1.0\n"),
                  ["python3", "-m", "pip", "install", "-r", "deps.txt"], "2020-01-01T00:00:00Z", lambda _: None)
    assert len(calls) > 3 and calls[2][-2:-1] == ["--uploaded-prior-to"]
