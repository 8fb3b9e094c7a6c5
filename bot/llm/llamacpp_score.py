"""How likely texts are after a shared prefix, read from llama.cpp's logits.

The prefix is evaluated once in sequence 0 (reusing what the cache holds, as any call does); each text is then
decoded after it in one batch that keeps every position's logits, and its cells are removed again, so that only
the prefix stays cached. Only the logits of the text's own positions are kept, one row at a time: a context made
with `logits_all` would hold a row of the whole vocabulary for every cell.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .errors import LLMRequestFailed
from .llamacpp_parallel import evaluate_prompt


def _log_softmax(llama: Any, row: int) -> Any:
    """The log-probabilities of the next token at output `row` of the last batch (-1: its last)."""
    import llama_cpp
    import numpy as np

    logits = np.ctypeslib.as_array(llama_cpp.llama_get_logits_ith(llama._ctx.ctx, row), shape=(llama.n_vocab(),))
    shifted = logits.astype(np.float64) - logits.max()  # a copy: the next decode overwrites the logits
    return shifted - np.log(np.exp(shifted).sum())


def _after_first(llama: Any, n_prefix: int, text: Sequence[int]) -> float:
    """The sum of log p(text[i]) for i >= 1: the text's tokens but its last are decoded after the prefix, in
    batches of the context's batch size, every position's logits kept."""
    batch, total = llama._batch.batch, 0.0
    feed = list(text[:-1])
    for start in range(0, len(feed), llama.n_batch):
        chunk = feed[start:start + llama.n_batch]
        batch.n_tokens = len(chunk)
        for i, token in enumerate(chunk):
            batch.token[i], batch.pos[i], batch.n_seq_id[i], batch.logits[i] = token, n_prefix + start + i, 1, True
            batch.seq_id[i][0] = 0
        llama._ctx.decode(llama._batch)
        total += sum(float(_log_softmax(llama, i)[text[start + i + 1]]) for i in range(len(chunk)))
    llama._ctx.kv_cache_seq_rm(0, n_prefix, -1)
    return total


def text_logprobs(llama: Any, prefix: Sequence[int], texts: Sequence[Sequence[int]]) -> list[float]:
    """Per text (tokens), the sum of its tokens' log-probabilities after `prefix` (tokens, at least one)."""
    n_prefix = len(prefix)
    longest = max((len(t) for t in texts), default=0)
    if n_prefix + longest > llama.n_ctx():
        raise LLMRequestFailed(f"a text to score needs {n_prefix + longest} tokens of context; the model has "
                               f"{llama.n_ctx()}")
    evaluate_prompt(llama, prefix)
    first = _log_softmax(llama, -1)  # the distribution after the prefix: every text's first token
    try:
        return [float(first[text[0]]) + _after_first(llama, n_prefix, text) if text else 0.0 for text in texts]
    finally:
        llama._ctx.kv_cache_seq_rm(0, n_prefix, -1)  # only the prefix stays cached, as after a call
        llama.n_tokens = n_prefix
        llama._requires_eval = True  # the logits are the last text's, not the prefix's
