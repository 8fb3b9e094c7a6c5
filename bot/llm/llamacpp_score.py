"""How likely texts are after a shared prefix, read from llama.cpp's logits.

The prefix is evaluated once in sequence 0 (reusing what the cache holds, as any call does); each text is then
decoded after it in batches that keep every position's logits. The texts go in token order and a text keeps the
cells of the start it shares with the one before (candidate fixes differ by an edit or two), so only the rest is
decoded; at the end only the prefix stays cached. Only the logits of the text's own positions are kept, one row at
a time: a context made with `logits_all` would hold a row of the whole vocabulary for every cell.
"""
from __future__ import annotations

from collections.abc import Sequence
from os.path import commonprefix
from typing import Any

from bot.llm.errors import LLMRequestFailed
from bot.llm.llamacpp_parallel import evaluate_prompt


def _log_softmax(llama: Any, row: int) -> Any:
    """The log-probabilities of the next token at output `row` of the last batch (-1: its last)."""
    import llama_cpp
    import numpy as np

    logits = np.ctypeslib.as_array(llama_cpp.llama_get_logits_ith(llama._ctx.ctx, row), shape=(llama.n_vocab(),))
    shifted = logits.astype(np.float64) - logits.max()  # a copy: the next decode overwrites the logits
    return shifted - np.log(np.exp(shifted).sum())


def _decode_rows(llama: Any, n_prefix: int, start: int, text: Sequence[int]) -> list[float]:
    """log p(text[i + 1]) for i >= start: the tokens text[start:-1] are decoded at their positions after the
    prefix (the cells before them already hold text[:start]), in batches of the context's batch size, every
    position's logits kept."""
    batch, found = llama._batch.batch, []
    feed = list(text[start:-1])
    for at in range(0, len(feed), llama.n_batch):
        chunk = feed[at:at + llama.n_batch]
        batch.n_tokens = len(chunk)
        for i, token in enumerate(chunk):
            batch.token[i], batch.pos[i] = token, n_prefix + start + at + i
            batch.n_seq_id[i], batch.logits[i] = 1, True
            batch.seq_id[i][0] = 0
        llama._ctx.decode(llama._batch)
        found += [float(_log_softmax(llama, i)[text[start + at + i + 1]]) for i in range(len(chunk))]
    return found


def text_logprobs(llama: Any, prefix: Sequence[int], texts: Sequence[Sequence[int]]) -> list[float]:
    """Per text (tokens), the sum of its tokens' log-probabilities after `prefix` (tokens, at least one)."""
    n_prefix = len(prefix)
    longest = max((len(t) for t in texts), default=0)
    if n_prefix + longest > llama.n_ctx():
        raise LLMRequestFailed(f"a text to score needs {n_prefix + longest} tokens of context; the model has "
                               f"{llama.n_ctx()}")
    evaluate_prompt(llama, prefix)
    first = _log_softmax(llama, -1)  # the distribution after the prefix: every text's first token
    scores = [0.0] * len(texts)
    # in token order, so that a text shares its start with the one before: candidates that differ by one edit
    # keep the cells of their common start, and only what follows is decoded again
    before: Sequence[int] = ()
    rows: list[float] = []  # per position i of `before`, log p(before[i + 1])
    try:
        for index in sorted(range(len(texts)), key=lambda i: list(texts[i])):
            text = texts[index]
            if not text:
                continue
            # the cells of the shared start but its last token, whose row (the next token's odds) is needed again
            start = max(0, len(commonprefix([list(before), list(text)])) - 1)
            llama._ctx.kv_cache_seq_rm(0, n_prefix + start, -1)
            rows = rows[:start] + _decode_rows(llama, n_prefix, start, text)
            scores[index] = float(first[text[0]]) + sum(rows)
            before = text
        return scores
    finally:
        llama._ctx.kv_cache_seq_rm(0, n_prefix, -1)  # only the prefix stays cached, as after a call
        llama.n_tokens = n_prefix
        llama._requires_eval = True  # the logits are the last text's, not the prefix's
