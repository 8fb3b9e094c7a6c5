"""Typed records that leave `bot.failures`: what failed, where, and what pytest said about it."""
from __future__ import annotations

from dataclasses import dataclass

from bot.errors import UserError


@dataclass(frozen=True)
class Frame:
    """One traceback entry. `function` is None when the output does not name it (long mode shows only the source);
    `code` is the line that was executing, stripped."""

    path: str
    line: int
    function: str | None
    code: str | None


@dataclass(frozen=True)
class Failure:
    """One failing (or erroring) test.

    `file`/`line` point at the failing assertion in the test file, or at the broken module for a syntax error that
    stopped collection. `expected`/`actual` are set only when pytest's assertion rewriting showed a comparison.
    Fields are None when the input did not say (a summary line alone gives only the id and a message)."""

    test_id: str
    file: str | None
    line: int | None
    assertion: str | None
    expected: str | None
    actual: str | None
    error_type: str | None
    message: str | None
    traceback: tuple[Frame, ...] = ()

    @property
    def error_line(self) -> str:
        """`ErrorType: message`, the exception's last line as Python prints it (parts the input lacked empty)."""
        return f"{self.error_type or ''}: {self.message or ''}"


class ParseError(UserError):
    """The input is not test output at all (not JUnit XML, no pytest run in the text)."""
