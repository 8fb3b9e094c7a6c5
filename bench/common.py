"""Helpers the benches share: slices of a selection (--part K/N), the model's speed line, and their sections of
bench/RESULTS.md."""
from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import TypeVar

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


def replace_section(path: Path, bench: str, key: str, section: str, header: str = "# Benchmark results\n") -> None:
    """Replaces the section `<!-- BENCH: KEY -->` ... `<!-- /BENCH: KEY -->` in `path`, or appends `section`
    (the file made, with `header`, when missing); written to a temporary file first, so a stop loses nothing."""
    text = path.read_text(encoding="utf-8") if path.exists() else header
    pattern = re.compile(rf"<!-- {bench}: {re.escape(key)} -->\n.*?<!-- /{bench}: {re.escape(key)} -->\n", re.S)
    if pattern.search(text):
        text = pattern.sub(lambda _m: section, text, count=1)
    else:
        text = text.rstrip("\n") + "\n\n" + section
    tmp = path.with_suffix(".md.tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(path)


def aligned(rows: Sequence[Sequence[str]]) -> list[str]:
    """A console table: the first column left-aligned, the others right-aligned, two spaces apart."""
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return ["  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths)))
            for r in rows]
