"""Model text -> SEARCH/REPLACE edits of the code it was shown, applied; or, for an edit that does not apply,
what the model needs to write it again: which SEARCH line the code does not have, and the nearest lines it has.

A block, in the format Aider and Agentless ask models for:

    <<<<<<< SEARCH
    lines copied from the code, as they read now
    =======
    the lines to put in their place
    >>>>>>> REPLACE

lets a model change one argument or add a branch of a long function without writing the whole function out,
which a small model cannot do within one answer's tokens, and change two places (two functions, a function and
a constant) in one answer.

In: the answer's text and the codes it may edit (the latest attempt, then the original). Out: the edited code,
or the reason no code could be had (`Extracted`), or None when the answer holds no block. Never: an edit applied
where its SEARCH lines do not name exactly one place (indentation aside)."""
from __future__ import annotations

import difflib
import re
from collections.abc import Sequence
from dataclasses import dataclass

from bot.agent.source.blocks import Extracted

# Small models miscount the markers' characters; 5 to 9 of them, and the words, are what identify a block.
_BLOCK = re.compile(r"^[ \t]*<{5,9}[ \t]*SEARCH[^\n]*\n(.*?)^[ \t]*={5,9}[ \t]*\n(.*?)(?:^[ \t]*>{5,9}[ \t]*REPLACE"
                    r"[^\n]*$|\Z)", re.S | re.M)
_START = re.compile(r"^[ \t]*<{5,9}[ \t]*SEARCH", re.M)
NEAREST = 6  # lines of the code shown back around the best near match
LIKE = 0.6  # how alike (difflib's ratio) lines must be to be shown as what the model meant to copy


@dataclass(frozen=True)
class Edit:
    search: tuple[str, ...]  # the lines to find, as the model wrote them
    replace: tuple[str, ...]  # the lines to put instead


class _Unapplied(Exception):
    """An edit that does not name one place of the code; its message is what the model is told."""


def has_blocks(text: str) -> bool:
    return _START.search(text) is not None


def parse_edits(text: str) -> list[Edit]:
    """The SEARCH/REPLACE blocks of an answer, in order; a block cut off by the answer's end keeps what it has
    (its REPLACE part may be incomplete, which the checks after it catch)."""
    return [Edit(_lines(m.group(1)), _lines(m.group(2))) for m in _BLOCK.finditer(text)]


def _lines(part: str) -> tuple[str, ...]:
    lines = part.split("\n")
    while lines and not lines[-1].strip():
        lines.pop()
    while lines and not lines[0].strip():
        lines.pop(0)
    return tuple(line.rstrip() for line in lines)


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _places(code: list[str], search: Sequence[str]) -> list[int]:
    """Where the search lines start in `code`: exactly first; else with each line's indentation ignored."""
    n = len(search)
    exact = [i for i in range(len(code) - n + 1) if [c.rstrip() for c in code[i:i + n]] == list(search)]
    if exact:
        return exact
    stripped = [s.strip() for s in search]
    return [i for i in range(len(code) - n + 1) if [c.strip() for c in code[i:i + n]] == stripped]


def _shifted(replace: Sequence[str], search: Sequence[str], found: Sequence[str]) -> list[str]:
    """The replacement moved by as much as the model's search lines are off from the code's own indentation."""
    first = next((i for i, s in enumerate(search) if s.strip()), 0)
    delta = _indent(found[first]) - _indent(search[first])
    if delta == 0:
        return list(replace)
    return [(" " * max(0, _indent(r) + delta) + r.lstrip()) if r.strip() else "" for r in replace]


def _nearest(code: list[str], search: Sequence[str]) -> str:
    """What the model is told about search lines the code does not have: the first such line, and the code's
    lines most like the search lines."""
    have = {c.strip() for c in code}
    missing = next((s for s in search if s.strip() and s.strip() not in have), None)
    said = f"the code has no line `{missing.strip()}`" if missing else "those lines are not consecutive in the code"
    n = max(1, len(search))
    wanted = "\n".join(s.strip() for s in search)
    ratios = [difflib.SequenceMatcher(None, wanted, "\n".join(c.strip() for c in code[i:i + n])).ratio()
              for i in range(max(1, len(code) - n + 1))]
    best = max(range(len(ratios)), key=ratios.__getitem__)
    if ratios[best] < LIKE:  # nothing like it: lines from elsewhere (an example), not a slip in copying
        return f"{said}; SEARCH must copy lines of the code you were given"
    lo, hi = max(0, best - 1), min(len(code), best + max(n, NEAREST - 1))
    return f"{said}. The nearest lines it has are:\n" + "\n".join(code[lo:hi])


def _apply(code: str, edits: Sequence[Edit]) -> str:
    lines = code.rstrip("\n").split("\n")
    for k, edit in enumerate(edits, 1):
        which = f"SEARCH block {k}" if len(edits) > 1 else "The SEARCH block"
        if not edit.search:
            raise _Unapplied(f"{which} is empty: copy into it the line or lines to change, exactly as they read")
        places = _places(lines, edit.search)
        if not places:
            raise _Unapplied(f"{which} matches no lines of the code: {_nearest(lines, edit.search)}\n"
                             "Copy the SEARCH lines exactly as they read in the code.")
        if len(places) > 1:
            raise _Unapplied(f"{which} matches {len(places)} places in the code: add the line before or after "
                             "it, so that it names one")
        at, n = places[0], len(edit.search)
        lines[at:at + n] = _shifted(edit.replace, edit.search, lines[at:at + n])
    return "\n".join(lines) + "\n"


def apply_blocks(text: str, bases: Sequence[str]) -> Extracted | None:
    """The code the answer's blocks make of the first of `bases` where all of them apply (the latest attempt
    before the original, so that a revision can build on it); None when the answer holds no block."""
    if not has_blocks(text):
        return None
    edits = parse_edits(text)
    if not edits:
        return Extracted(None, "edit", "the answer starts a SEARCH/REPLACE block but does not finish it: a block "
                                       "needs its `=======` line between the SEARCH and the REPLACE lines")
    first_error = ""
    for base in bases:
        try:
            edited = _apply(base, edits)
        except _Unapplied as exc:
            first_error = first_error or str(exc)
            continue
        return Extracted(edited)
    return Extracted(None, "edit", first_error)
