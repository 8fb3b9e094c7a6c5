"""What the agent reports as it works (each attempt, each search round), as the lines of `fixbot fix`'s log.

In: a function that says one line. Out: the agent's `progress` callback. Never: decides anything."""
from __future__ import annotations

from collections.abc import Callable

from bot.agent import Attempt
from bot.agent.types import SearchRound


def progress_lines(say: Callable[[str], None]) -> Callable[[Attempt | SearchRound], None]:
    def line(item: Attempt | SearchRound) -> None:
        if isinstance(item, SearchRound):
            say(f"    search around {item.base}: {item.candidates} mutants, "
                f"{'found ' + item.edit if item.fixed else 'none passed'} · {item.seconds:.1f} s")
        elif item.node == "score":
            say(f"    {item.feedback} · {item.latency_s:.1f} s")
        else:
            say(f"    attempt {item.iteration} ({item.node}): {item.outcome} · {item.completion_tokens} tokens · "
                f"{item.latency_s:.1f} s")
    return line
