"""Which candidates stay in the choice among fixes, by what they and the references return on the judge's inputs
(bot/agent/choose/select.py gathers the outputs; here nothing runs and no model is asked).

The references (bot/agent/choose/references.py) are the main evidence: where those that count all return the same, that
is expected, and the fixes that meet the most expectations stay, or the references where they meet more. Weaker
kinds of evidence temper it:
- An original the visible tests pass on is wrong somewhere they do not look (the task says so). A reference or a
  fix that returns what it returns on every input repeats the bug as far as the judge can tell (a triangle's
  hypotenuse taken to be the last side, as in the original): it neither votes nor stays in the choice, while
  something else does.
- Beside a lone reference, the original is the second voter; but where the visible tests fail on it, its bug may
  show on many inputs (a bracket checker that always says False), so the two replace the fixes only where every
  fix raises or times out on an input where both return the same value.
- A lone reference is no consensus, but where it returns a value, the fixes that agree with it most are
  likelier right than those that do not: a tie-break among the fixes that meet the most, never a reason to
  replace them (a buggy prime test that raises everywhere leaves the original no vote at all).
- Where the judge's inputs are those of the model's asserts (the visible tests give none), the references replace
  the fixes only if they pass as many of the asserts as the best fix: three references that share one misreading
  (an expression evaluated left to right) agree with each other, not with the docstring's worked example.
Among the fixes that stay, those that raise or time out on the fewest inputs the original returns from are kept:
a fix that reads a sentence's first character raises on an empty text the buggy function counted as zero.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from bot.agent.choose.expectations import Expectation, agrees
from bot.agent.choose.references import MIN_CONSENSUS, consensus, failed, favoured, met


@dataclass(frozen=True, kw_only=True)
class Outputs:
    """What each function returned on the judge's inputs (eval/behaviour.py's strings, one per input)."""

    fixes: Sequence[Sequence[str]]
    references: Sequence[Sequence[str]]
    original: Sequence[str]
    original_passes: bool = False  # the visible tests pass on the original, which is wrong elsewhere
    asserts: Sequence[Expectation] = ()  # the model's asserts, when the inputs are theirs


@dataclass(frozen=True, kw_only=True)
class Shortlist:
    fixes: list[int]  # indices of the fixes that stay in the choice
    references: list[int]  # indices of the references that replace them (empty when a fix stays)
    expected: list[str | None] = field(default_factory=list)  # per input, the consensus
    set_aside: int = 0  # fixes and references left out for behaving like an original the visible tests pass on


def _unlike_original(outputs: Outputs) -> tuple[list[int], list[int]]:
    """The fixes and references that count: where the original passes the visible tests, those that return what
    it returns on some input and not on all; every one otherwise, or when none differs."""
    fixes, refs = list(range(len(outputs.fixes))), list(range(len(outputs.references)))
    if not outputs.original_passes:
        return fixes, refs
    original = list(outputs.original)
    refs = [i for i in refs if list(outputs.references[i]) != original]
    differ = [i for i in fixes if list(outputs.fixes[i]) != original]
    return (differ if differ or refs else fixes), refs


def _most(indices: Sequence[int], score: Callable[[int], int]) -> list[int]:
    """Those of `indices` with the highest score."""
    best = max((score(i) for i in indices), default=0)
    return [i for i in indices if score(i) == best]


def _passed(outputs: Sequence[str], asserts: Sequence[Expectation]) -> int:
    return sum(agrees(o, e.expected) for o, e in zip(outputs, asserts))


def _agreed(fix: Sequence[str], lone: Sequence[str]) -> int:
    """The inputs where a fix returns what the lone reference returns, where it returns."""
    return sum(1 for got, want in zip(fix, lone) if got == want and not failed(want))


def _new_failures(fix: Sequence[str], original: Sequence[str]) -> int:
    """The inputs where a fix raises or times out and the original returns."""
    return sum(1 for got, was in zip(fix, original) if failed(got) and not failed(was))


def _fails_where_expected(fix: Sequence[str], expected: Sequence[str | None]) -> bool:
    """Whether a fix raises or times out on an input where a value is expected."""
    return any(want is not None and failed(got) for got, want in zip(fix, expected))


def _may_replace(outputs: Outputs, fixes: list[int], counted: list[Sequence[str]], rewrites: list[int],
                 expected: Sequence[str | None]) -> bool:
    """Whether the references in `rewrites` (positions in `counted`) may replace the fixes: not a lone one beside
    an original the visible tests fail on, unless every fix raises or times out where the two agree; not ones that
    pass fewer of the model's asserts than the best fix."""
    lone_beside_failing_original = len(counted) == 1 and not outputs.original_passes
    if lone_beside_failing_original and not all(_fails_where_expected(outputs.fixes[i], expected) for i in fixes):
        return False
    return not outputs.asserts or max(_passed(counted[k], outputs.asserts) for k in rewrites) >= max(
        _passed(outputs.fixes[i], outputs.asserts) for i in fixes)


def shortlist(outputs: Outputs, reference_texts: Sequence[str] = ()) -> Shortlist:
    """The fixes that stay in the choice, or the references that replace them (one of each text: the references'
    code hashes in `reference_texts`), with the consensus they were measured against."""
    fixes, refs = _unlike_original(outputs)
    counted = [outputs.references[i] for i in refs]
    expected = consensus([*counted, outputs.original] if 0 < len(counted) < MIN_CONSENSUS else counted)
    fix_met = [met(outputs.fixes[i], expected) for i in fixes]
    texts = [reference_texts[i] for i in refs] if reference_texts else ()
    keep, rewrites = favoured(fix_met, [met(out, expected) for out in counted], texts)
    if rewrites and fixes and not _may_replace(outputs, fixes, counted, rewrites, expected):
        keep, rewrites = _most(range(len(fixes)), lambda k: fix_met[k]), []
    kept = _most([fixes[k] for k in keep], lambda i: -_new_failures(outputs.fixes[i], outputs.original))
    if kept and len(counted) == 1:
        kept = _most(kept, lambda i: _agreed(outputs.fixes[i], counted[0]))
    return Shortlist(fixes=kept, references=[refs[k] for k in rewrites], expected=expected,
                     set_aside=len(outputs.fixes) - len(fixes) + len(outputs.references) - len(refs))
