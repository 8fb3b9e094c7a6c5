"""What a failure's output says about where and how to edit, read once per search round: the mutation operators
that only make sense for some failures (a None check, a caught exception, an import, bytes) ask this record, not
the text. It also holds what the code around the function offers: its callees' True/False keyword parameters."""
from __future__ import annotations

from dataclasses import dataclass

from bot.agent.search.decoding import bytes_shown
from bot.agent.search.guards import empty_used, none_uses, raised
from bot.agent.search.keywords import Flags, callee_flags
from bot.agent.search.names import undefined
from bot.agent.search.regex import quoted_values


@dataclass(frozen=True, kw_only=True)
class Evidence:
    hot_lines: frozenset[int] = frozenset()  # lines of the function the traceback shows (1-based)
    exceptions: tuple[str, ...] = ()  # builtin exceptions raised (mutate_guards.raised)
    undefined: tuple[str, ...] = ()  # names a NameError says are not defined (mutate_names.undefined)
    nones: tuple[str, ...] = ()  # how a None was used as an object (mutate_guards.none_uses)
    bytes_shown: bool = False  # bytes on a line the failure shows, or named by its error (mutate_guards.bytes_shown)
    empty: bool = False  # an empty string used as a key or a number (mutate_guards.empty_used)
    quoted: tuple[str, ...] = ()  # strings the failure quotes: inputs a pattern may fail to match (mutate_regex)
    flags: Flags = ()  # the callees' True/False keyword parameters, from the target's context (search/keywords.py)

    def skip_conditions(self) -> list[str]:
        """What a comprehension's item must be to be kept (mutate_guards.filter_edits), as the failure asks."""
        return ([" is not None"] if self.nones else []) + ([""] if self.empty else [])


NO_EVIDENCE = Evidence()


def hot_lines(function_source: str, feedback: str) -> frozenset[int]:
    """Lines of the function that the failure's traceback shows (pytest prints the code line of each frame)."""
    shown = {line.strip().lstrip(">").strip() for line in feedback.splitlines()}
    return frozenset(i for i, line in enumerate(function_source.splitlines(), 1)
                     if len(line.strip()) > 3 and line.strip() in shown)


def read_evidence(function_source: str, feedback: str, context: str = "") -> Evidence:
    return Evidence(hot_lines=hot_lines(function_source, feedback), exceptions=tuple(raised(feedback)),
                    undefined=tuple(undefined(feedback)), nones=tuple(none_uses(feedback)),
                    bytes_shown=bytes_shown(feedback), empty=empty_used(feedback),
                    quoted=tuple(quoted_values(feedback)), flags=callee_flags(context))
