"""How likely the model finds each candidate fix, given what the function should do: the coder score of
Coder-Reviewer reranking (Zhang et al., 2022), the log-probability of the function's body after its docstring
and its `def` line.

Why: among fixes that all pass weak tests, the one the docstring describes is usually the one the model finds
likeliest to follow it, and the score needs no answer to be written, only the candidates to be read
(bench/pool_scores.py measures it against the other ways of choosing; bench/RESULTS.md has the numbers).
"""
from __future__ import annotations

from collections.abc import Sequence

from bot.agent.source.code import split_docstring
from bot.llm import LLMError, ScoringLLM


def coder_text(code: str, doc: str) -> tuple[str, str]:
    """(the prefix: the docstring as a comment, then the `def` line; the text to score: the rest of the body)."""
    body = split_docstring(code)[0].strip()
    header, _, rest = body.partition("\n")
    return f"# {doc.strip()}\n```python\n{header}\n", f"{rest}\n```"


def coder_scores(llm: object, original: str, codes: Sequence[str]) -> list[float] | None:
    """Per code, the coder score under the docstring of `original`; None when the model cannot score texts (or
    failed to), so that the caller chooses without it. Candidates with the same `def` line share one prefix."""
    if not isinstance(llm, ScoringLLM):
        return None
    doc = split_docstring(original)[1]
    texts = [coder_text(code, doc) for code in codes]
    by_prefix: dict[str, list[int]] = {}
    for i, (prefix, _) in enumerate(texts):
        by_prefix.setdefault(prefix, []).append(i)
    scores = [0.0] * len(codes)
    try:
        for prefix, members in by_prefix.items():
            for i, score in zip(members, llm.logprobs(prefix, [texts[i][1] for i in members])):
                scores[i] = score
    except LLMError:  # ScoringUnsupported behind a wrapper, or a text longer than the context
        return None
    return scores
