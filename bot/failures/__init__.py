"""Failing tests out of pytest output, unittest output, JUnit XML or a raw CI log, as typed `Failure` records."""
from bot.failures.ci_log import parse_ci_log
from bot.failures.junit import parse_junit
from bot.failures.pytest_output import parse_pytest_output
from bot.failures.types import Failure, Frame, ParseError
from bot.failures.unittest_output import parse_unittest_output

__all__ = ["Failure", "Frame", "ParseError", "parse_ci_log", "parse_junit", "parse_pytest_output",
           "parse_unittest_output"]
