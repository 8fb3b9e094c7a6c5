"""What candidates return on more inputs than the visible tests hold: the evidence by which bot/agent/choose/select.py
groups the candidates that pass (and, on the inputs of the model's asserts, scores them). The inputs are the
visible tests' own calls, those calls with two arguments of one type swapped (a function meant to treat its
arguments alike, such as a triangle's three sides, often does so only in the order its examples give them), and with
one argument varied at a time, within its type (numbers moved by one, zeroed and negated; strings and lists emptied,
shortened, reversed, extended; a string's letters rotated by 13, so that letters the examples never show appear; a
list of integers with each moved by one, and with a fraction appended; a list of strings with each rotated), so
that they stay inputs the function is meant for. Never the hidden tests."""
from __future__ import annotations

import ast
import codecs
import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from bot.agent.choose.expectations import literal_call_args
from bot.fix.locate.spans import splice
from sandbox import Sandbox

from .screen import run_programs

MAX_INPUTS = 32
TIMEOUT_S = 0.5  # per call: a candidate that loops on an input is that input's "timeout"
OUTPUT_CHARS = 200


def visible_calls(test_code: str, entry_point: str) -> list[tuple[Any, ...]]:
    """The argument tuples of the calls of the function in the test code whose arguments are all literals."""
    try:
        tree = ast.parse(test_code)
    except SyntaxError:
        return []
    names = frozenset({entry_point, "candidate"} | {a.arg for node in ast.walk(tree)
                                                    if isinstance(node, ast.FunctionDef) and node.name == "check"
                                                    for a in node.args.args})
    return [args for node in ast.walk(tree) if (args := literal_call_args(node, names)) is not None]


def _rot13(text: str) -> str:
    return codecs.encode(text, "rot13")


def _variants(value: Any) -> list[Any]:
    if isinstance(value, bool):
        return [not value]
    if isinstance(value, int):
        return [value + 1, value - 1, 0, -value, 2 * value]
    if isinstance(value, float):
        return [value + 0.5, value - 0.5, 0.0, -value]
    if isinstance(value, str):
        return ["", value[:-1], value[::-1], value + value[-1:], value.swapcase(), _rot13(value)]
    if isinstance(value, list):
        return [[], value[:-1], value[::-1], value + value[-1:], value[1:], *_list_items_varied(value)]
    if isinstance(value, tuple):
        return [(), value[:-1], value[::-1], value + value[-1:], value[1:]]
    return []


def _list_items_varied(value: list[Any]) -> list[list[Any]]:
    """A list of integers with each moved by one, and with a fraction appended (a function that should skip
    non-integers rarely meets one in its examples); a list of strings with each one's letters rotated by 13."""
    if value and all(type(x) is int for x in value):
        return [[x + 1 for x in value], value + [value[-1] + 0.5]]
    if value and all(isinstance(x, str) for x in value):
        return [[_rot13(x) for x in value]]
    return []


def _swapped(args: tuple[Any, ...]) -> list[tuple[Any, ...]]:
    """`args` with each pair of arguments of the same type exchanged: (3, 4, 5) -> (4, 3, 5), (5, 4, 3), (3, 5, 4)."""
    found = []
    for i, j in itertools.combinations(range(len(args)), 2):
        if type(args[i]) is type(args[j]) and args[i] != args[j]:
            found.append(tuple(args[j] if k == i else args[i] if k == j else a for k, a in enumerate(args)))
    return found


def probe_inputs(calls: Sequence[tuple[Any, ...]], limit: int = MAX_INPUTS) -> list[tuple[Any, ...]]:
    """The calls themselves, then each call with two arguments swapped or one argument varied, taken in turn
    across the calls so that a long test does not crowd the others out; distinct, at most `limit`."""
    per_call = [_swapped(args) + [tuple(args[:i]) + (v,) + tuple(args[i + 1:])
                                  for i, a in enumerate(args) for v in _variants(a)] for args in calls]
    ordered = list(calls) + [v for round_ in _rounds(per_call) for v in round_]
    seen: dict[str, tuple[Any, ...]] = {}
    for args in ordered:
        seen.setdefault(repr(args), args)
    return list(seen.values())[:limit]


def _rounds(lists: list[list[Any]]) -> list[list[Any]]:
    """[[a1, a2], [b1]] -> [[a1, b1], [a2]]"""
    return [[items[i] for items in lists if i < len(items)] for i in range(max(map(len, lists), default=0))]


def _output(record: dict[str, Any]) -> str:
    if record.get("timed_out"):
        return "timeout"
    if not record.get("passed"):
        return "!" + str(record.get("error", "")).split(":")[0]  # the exception's type
    return str(record.get("result", ""))


@dataclass(frozen=True)
class BehaviourJudge:
    """The `Judge` of bot/agent/choose/select.py for one function of a module: each candidate spliced in and called on
    each input in the sandbox's screen runner, one small program per call."""

    sandbox: Sandbox
    module: str
    function: str
    inputs: tuple[tuple[Any, ...], ...]

    def program(self, function_source: str, args: tuple[Any, ...]) -> str:
        return (f"{splice(self.module, self.function, function_source)}\n"
                f"__fixbot_result__ = repr({self.function}(*{args!r}))[:{OUTPUT_CHARS}]\n")

    def outputs(self, sources: Sequence[str], inputs: Sequence[tuple[Any, ...]] | None = None) -> list[list[str]]:
        inputs = self.inputs if inputs is None else inputs
        programs = [self.program(s, args) for s in sources for args in inputs]
        records = run_programs(self.sandbox, programs, TIMEOUT_S)
        n = len(inputs)
        return [[_output(r) for r in records[i * n:(i + 1) * n]] for i in range(len(sources))]


def behaviour_judge(sandbox: Sandbox, module: str, entry_point: str, visible_tests: str) -> BehaviourJudge:
    """A judge on the visible tests' inputs and their variants (none when the tests have no literal call: then
    only the inputs of the model's asserts tell the candidates apart)."""
    return BehaviourJudge(sandbox, module, entry_point, tuple(probe_inputs(visible_calls(visible_tests, entry_point))))
