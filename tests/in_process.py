"""The agent's unit tests run candidates in this process, not in the sandbox."""
from __future__ import annotations

from collections.abc import Sequence

from bot.agent import TestOutcome


class InProcessHarness:
    """A `Harness` whose `check` a test defines; `check_many` is one `check` each (no sandbox batch)."""

    def check(self, function_source: str) -> TestOutcome:
        raise NotImplementedError

    def check_many(self, sources: Sequence[str]) -> list[TestOutcome]:
        return [self.check(s) for s in sources]
