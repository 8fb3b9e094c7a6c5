"""Several answers to one prompt, decoded together: one llama.cpp batch per step holds a token of every answer.

Why: on CPU a step that decodes three tokens of three sequences costs far less than three steps of one, and the
samples of a call (`--samples 3`, fixbot fix's default) share their whole prompt. The prompt is evaluated once in
sequence 0 and shared with the other sequences (`llama_memory_seq_cp`, which in a unified KV cache only tags the
same cells); every answer has its own sampler chain, the same as llama-cpp-python builds for one answer (top-k
40, top-p 0.95, min-p 0.05, temperature, a seeded draw; greedy at temperature 0), so an answer is the one a
sequential call with that temperature and seed would give, up to the float rounding of a batched step.
Afterwards only the prompt stays cached, in sequence 0, as llama-cpp-python's own prefix reuse expects.
"""
from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

MAX_SEQUENCES = 4  # sequences the context is made for; more answers are decoded in rounds of this many


@dataclass(frozen=True, kw_only=True)
class Decoded:
    tokens: list[int]
    finished: bool  # ended by an end-of-generation token, not by max_tokens


def allow_sequences(llama: Any, n: int = MAX_SEQUENCES) -> None:
    """Give `llama` a context that holds `n` sequences in one unified KV cache of its n_ctx cells.
    llama-cpp-python's constructor has no such option, so the context it made is replaced."""
    from llama_cpp import _internals

    params = llama.context_params
    params.n_seq_max = n
    params.kv_unified = True  # otherwise each sequence would get n_ctx / n cells
    old = llama._ctx
    llama._ctx = _internals.LlamaContext(model=llama._model, params=params, verbose=llama.verbose)
    old.close()


def _sampler(temperature: float, seed: int) -> Any:
    from llama_cpp import _internals

    chain = _internals.LlamaSampler()
    if temperature <= 0:
        chain.add_greedy()
        return chain
    chain.add_top_k(40)
    chain.add_top_p(0.95, 1)
    chain.add_min_p(0.05, 1)
    chain.add_temp(temperature)
    chain.add_dist(seed)
    return chain


def evaluate_prompt(llama: Any, tokens: Sequence[int]) -> None:
    """Evaluate `tokens` in sequence 0, reusing the longest prefix llama.cpp still holds (at least the last token
    is evaluated again, so that the logits to sample from are fresh)."""
    common = min(llama.longest_token_prefix(llama._input_ids, tokens), len(tokens) - 1)
    llama._ctx.kv_cache_seq_rm(-1, common, -1)
    llama.n_tokens = common
    llama.eval(list(tokens[common:]))


def decode_together(llama: Any, prompt: Sequence[int], temperatures: Sequence[float], seeds: Sequence[int],
                    max_tokens: int) -> tuple[list[Decoded], float]:
    """The answers (one per temperature and seed) and the seconds spent decoding them (the prompt excluded)."""
    import llama_cpp

    n, n_prompt = len(temperatures), len(prompt)
    for seq in range(1, n):
        llama._ctx.kv_cache_seq_cp(0, seq, 0, n_prompt)
    samplers = [_sampler(t, s) for t, s in zip(temperatures, seeds)]
    vocab = llama_cpp.llama_model_get_vocab(llama._model.model)
    answers: list[list[int]] = [[] for _ in range(n)]
    finished = [False] * n
    row = [-1] * n  # where each sequence's logits are in the last decoded batch (-1: the prompt's last token)
    batch = llama._batch.batch
    start = time.monotonic()
    try:
        for step in range(max_tokens):
            live = []
            for seq in range(n):
                if finished[seq]:
                    continue
                token = llama_cpp.llama_sampler_sample(samplers[seq].sampler, llama._ctx.ctx, row[seq])
                if llama_cpp.llama_vocab_is_eog(vocab, token):
                    finished[seq] = True
                    continue
                answers[seq].append(token)
                live.append((seq, token))
            if not live or step == max_tokens - 1:
                break
            batch.n_tokens = len(live)
            for i, (seq, token) in enumerate(live):
                batch.token[i], batch.pos[i], batch.n_seq_id[i], batch.logits[i] = token, n_prompt + step, 1, True
                batch.seq_id[i][0] = seq
                row[seq] = i
            llama._ctx.decode(llama._batch)
    finally:
        for seq in range(1, n):
            llama._ctx.kv_cache_seq_rm(seq, -1, -1)
        llama._ctx.kv_cache_seq_rm(0, n_prompt, -1)  # the prompt stays cached for the next call
        llama.n_tokens = n_prompt
        llama._requires_eval = True  # the logits are the last batch's, not the prompt's
        for chain in samplers:
            chain.close()
    return [Decoded(tokens=a, finished=f) for a, f in zip(answers, finished)], time.monotonic() - start
