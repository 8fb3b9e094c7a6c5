"""Helpers the benches share: slices of a selection (--part K/N) and the model's speed line."""
from __future__ import annotations

from typing import Sequence, TypeVar

T = TypeVar("T")


def part_slice(items: Sequence[T], part: str) -> list[T]:
    """The K-th of N consecutive slices of `items` (--part K/N); the N slices cover `items` once, in order.
    A malformed part raises ValueError with a one-line message for the bench to prefix with its name."""
    k, _, n = part.partition("/")
    if not (k.isdigit() and n.isdigit() and 1 <= int(k) <= int(n)):
        raise ValueError(f"--part {part!r}: use K/N with 1 <= K <= N, e.g. 1/2")
    size = len(items)
    return list(items[round(size * (int(k) - 1) / int(n)):round(size * int(k) / int(n))])


def speed_line(speed: dict, workers: int) -> str:
    """bench/agents.py's `model_speed` record as the one line a results table carries."""
    return (f"model speed here: {speed['prompt_tok_s']:.0f} prompt / {speed['gen_tok_s']:.1f} generated tok/s per "
            f"process ({speed['threads']} thread(s) each, {workers} worker(s))")
