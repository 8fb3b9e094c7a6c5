"""The bundled model for real: in process, and behind llama-cpp-python's OpenAI-compatible server.

Slow on CPU (each answer costs seconds), so the calls are few and short, and the model is loaded once
per session. A missing model or extra fails here; nothing is skipped.
"""
from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.llm import Completion, Message, ensure_bundled_model, open_llm
from bot.llm.errors import PromptTooLong
from bot.llm.llama_server import serve_gguf
from bot.llm.llamacpp_backend import LlamaCppLLM, available_cores

pytestmark = pytest.mark.model

BUGGY = "def add(a, b):\n    return a - b\n"
TESTS = "assert add(2, 3) == 5\nassert add(-1, 1) == 0\nassert add(0, 0) == 0\n"
REPAIR = [
    Message("system", "You are an expert Python programmer. Fix the bug in the function. Reply with only the "
                      "corrected function in a single ```python code block, without tests or explanations."),
    Message("user", f"This function fails its tests.\n\n```python\n{BUGGY}```\n\nTests:\n```python\n{TESTS}```"),
]


def first_code_block(text: str) -> str:
    m = re.search(r"```(?:python)?\s*\n(.*?)```", text, re.S)
    return m.group(1) if m else text


@pytest.fixture(scope="session")
def model_path() -> Path:
    return ensure_bundled_model(progress=False)


@pytest.fixture(scope="session")
def bundled() -> Iterator[LlamaCppLLM]:
    llm = open_llm("llamacpp:bundled", progress=False)
    assert isinstance(llm, LlamaCppLLM)
    try:
        yield llm
    finally:
        llm.close()


@pytest.fixture(scope="session")
def repair_answer(bundled: LlamaCppLLM) -> Completion:
    return bundled.complete(REPAIR, temperature=0.0, max_tokens=96, seed=0)


def test_the_bundled_model_repairs_a_function_that_then_passes_in_the_sandbox(repair_answer: Completion,
                                                                             sandbox_image: str) -> None:
    from sandbox import open_sandbox

    fixed = first_code_block(repair_answer.text)
    assert "def add" in fixed, repair_answer.text
    source = f"{fixed}\n\n{TESTS}print('all asserts passed')\n"
    with open_sandbox("docker", image=sandbox_image) as sb:
        r = sb.run({"test_add.py": source}, ["python3", "test_add.py"], timeout=30)
    assert r.ok and "all asserts passed" in r.stdout, (repair_answer.text, r)


def test_a_completion_records_usage_and_latency(repair_answer: Completion, bundled: LlamaCppLLM) -> None:
    assert 60 < repair_answer.prompt_tokens < 200
    assert 5 < repair_answer.completion_tokens <= 96
    assert repair_answer.finish_reason in ("stop", "length")
    assert 0 < repair_answer.latency_s < 120
    assert repair_answer.model == "llamacpp:bundled"
    assert bundled.n_ctx == 4096


def test_the_shared_prefix_is_reused_between_calls(bundled: LlamaCppLLM) -> None:
    system = Message("system", "You review Python code for a continuous integration bot. " * 25)
    bundled.reset()
    cold = bundled.complete([system, Message("user", "Is `return a - b` right for add?")], max_tokens=1)
    warm = bundled.complete([system, Message("user", "Is `return a + b` right for sub?")], max_tokens=1)
    assert cold.prompt_tokens > 250 and abs(cold.prompt_tokens - warm.prompt_tokens) < 5
    # Only the tokens after the shared system prompt are evaluated again (measured: 12 of 275, ~7x faster). Counted
    # by llama.cpp, not timed: under load (a benchmark beside the tests) the timings overlapped.
    assert cold.cached_tokens <= 1, cold
    assert warm.cached_tokens > 250 and warm.prompt_tokens - warm.cached_tokens < 25, warm
    # the seconds llama.cpp spent on the prompt: part of the call's, and far fewer for 12 tokens than for 275
    assert 0 < cold.prompt_eval_s <= cold.latency_s and warm.prompt_eval_s < cold.prompt_eval_s, (cold, warm)
    bundled.reset()
    again = bundled.complete([system, Message("user", "Is `return a + b` right for sub?")], max_tokens=1)
    assert again.cached_tokens <= 1, again


def test_answers_decoded_together_are_those_of_calls_one_after_another(bundled: LlamaCppLLM) -> None:
    bundled.reset()
    cold = bundled.complete_many(REPAIR, temperatures=[0.0, 0.9], seeds=[0, 7], max_tokens=8)
    assert cold[0].cached_tokens <= 1 and 0 < cold[0].prompt_eval_s < cold[0].latency_s, cold[0]  # all of it evaluated
    alone = [bundled.complete(REPAIR, temperature=t, max_tokens=64, seed=s) for t, s in ((0.0, 0), (0.9, 7))]
    together = bundled.complete_many(REPAIR, temperatures=[0.0, 0.9, 0.0], seeds=[0, 7, 3], max_tokens=64)
    assert len(together) == 3
    # greedy is greedy however many sequences share the batch (this answer has no near ties); the seeded draw is
    # the same draw up to the last bits of a batched step, which can tip a near tie, so it is only checked as code
    assert together[0].text == together[2].text == alone[0].text, (together, alone)
    assert "def add" in first_code_block(together[1].text), together[1].text
    # the fixbot-rendered prompt is token for token the chat template's: all of it was still cached
    assert together[0].prompt_tokens == alone[0].prompt_tokens
    assert together[0].prompt_tokens - together[0].cached_tokens <= 1, together[0]
    assert [c.cached_tokens for c in together[1:]] == [together[0].prompt_tokens] * 2
    assert all(c.finish_reason in ("stop", "length") and 0 < c.completion_tokens <= 64 for c in together)
    # afterwards the prompt is still cached and the next ordinary call starts from it
    after = bundled.complete(REPAIR, temperature=0.0, max_tokens=64, seed=0)
    assert after.text == alone[0].text and after.prompt_tokens - after.cached_tokens <= 1, after


def test_threads_follow_the_cpu_affinity() -> None:
    assert available_cores() == len(os.sched_getaffinity(0))


@pytest.fixture(scope="session")
def llama_server(model_path: Path) -> Iterator[str]:
    """llama-cpp-python's own OpenAI-compatible server on a free loopback port, stopped at the end."""
    with serve_gguf(model_path, n_ctx=2048, ready_timeout_s=120) as base:
        yield base


def test_the_openai_backend_talks_to_a_real_local_server(llama_server: str,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)  # loopback: no key needed
    llm = open_llm("openai:bundled", api_base=llama_server, timeout_s=120, max_retries=1)
    c = llm.complete([Message("system", "Answer with one word."),
                      Message("user", "What keyword defines a function in Python?")], max_tokens=8, seed=0)
    assert "def" in c.text.lower(), c
    assert c.prompt_tokens > 10 and 0 < c.completion_tokens <= 8
    assert c.finish_reason in ("stop", "length") and c.attempts == 1 and c.latency_s > 0


def test_an_answer_held_to_the_edit_schema_is_edits_that_apply(bundled: LlamaCppLLM) -> None:
    from bot.agent.designs.edit_layout import apply_edits
    from bot.agent.designs.edits import edit_schema, numbered, parse_edits

    # a quoted string among the lines: an enum value with a JSON escape once made a grammar that crashed llama.cpp
    source = 'def add(a, b):\n    total = a - b\n    unit = ""\n    return total\n'
    ask = [Message("user", f"This function should add:\n{numbered(source)}\nExplain the bug first, then give the "
                           'fix as {"edits": [{"op": "replace", "line": "the line as it reads", "code": "..."}]}.')]
    free = bundled.complete(ask, temperature=0.0, max_tokens=120, seed=0)
    held = bundled.complete_json(ask, edit_schema(source), temperature=0.0, max_tokens=120, seed=0)
    assert not free.text.lstrip().startswith("{"), free.text  # asked for prose first, the model writes prose
    edits = parse_edits(held.text, source)  # under the schema: JSON only, every line one of lines 2-4
    assert held.text.lstrip().startswith("{") and all(2 <= getattr(e, "start", 2) <= 4 for e in edits), held.text
    assert apply_edits(source, edits).startswith("def add(a, b):\n"), held.text


def test_a_text_s_likelihood_is_the_one_a_whole_evaluation_gives(bundled: LlamaCppLLM, model_path: Path) -> None:
    """Scored after a cached prefix, row by row, as a context that keeps every position's logits scores it."""
    import numpy as np
    from llama_cpp import Llama

    prefix = "# Return the sum of a and b.\n```python\ndef add(a, b):\n"
    # the first three share their start (kept in the cache from one text to the next), the second is the first's
    # start, the last is a text twice
    texts = ["    return a + b\n```", "    return a + b", "    return a - b\n```", "    return a + b + 0\n```",
             "    total = a\n    total += b\n    return total\n```", "    return a - b\n```"]
    got = bundled.logprobs(prefix, texts)
    whole = Llama(model_path=str(model_path), n_ctx=512, logits_all=True, n_threads=available_cores(), verbose=False)
    try:
        expected = []
        for text in texts:
            a, b = whole.tokenize(prefix.encode(), add_bos=False), whole.tokenize(text.encode(), add_bos=False)
            whole.reset()
            whole.eval(a + b)
            rows = np.asarray(whole.scores[len(a) - 1:len(a) + len(b) - 1], dtype=np.float64)
            rows -= rows.max(axis=1, keepdims=True)
            rows -= np.log(np.exp(rows).sum(axis=1, keepdims=True))
            expected.append(float(sum(rows[i, token] for i, token in enumerate(b))))
    finally:
        whole.close()
    # up to the rounding of llama.cpp's kernels, which differ with a batch's size (a text that keeps the cells of
    # the one before decodes fewer tokens at once; measured: 0.12 of 13.8); a cell at the wrong position, or a row
    # of the wrong token, is off by nats
    assert got == pytest.approx(expected, abs=0.3), (got, expected)
    assert got[2] == got[5]  # a text twice: the second reuses every cell but its last
    assert got[0] > got[2] and all(score < 0 for score in got)  # the docstring's sum is the likelier body
    # a text longer than a batch is decoded in several: the same score, up to that rounding (measured: within 0.31
    # of 17.3 for batches of 1 to 512 tokens)
    batch = bundled._llama.n_batch
    bundled._llama.n_batch = 4
    try:
        assert bundled.logprobs(prefix, texts[4:]) == pytest.approx(got[4:], abs=0.5)
    finally:
        bundled._llama.n_batch = batch
    # only the prefix stays cached: the next call answers as it would have
    bundled.reset()
    alone = bundled.complete(REPAIR, temperature=0.0, max_tokens=32, seed=0)
    bundled.logprobs(prefix, texts)
    after = bundled.complete(REPAIR, temperature=0.0, max_tokens=32, seed=0)
    assert after.text == alone.text and after.cached_tokens <= 1, after


LONG = [Message("system", "Answer with one word."), Message("user", "Which word comes last? " + "apple " * 5000)]


def test_a_prompt_longer_than_the_context_is_the_prompt_s_failure(bundled: LlamaCppLLM) -> None:
    """A prompt that does not fit is `PromptTooLong` (one target's evidence was too long, the run goes on:
    bot/fix/loop/turn.py), not a failure of the model."""
    with pytest.raises(PromptTooLong, match="exceed context window"):
        bundled.complete(LONG, max_tokens=8, seed=0)


def test_a_server_that_refuses_a_long_prompt_is_the_prompt_s_failure(llama_server: str,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    llm = open_llm("openai:bundled", api_base=llama_server, timeout_s=120, max_retries=1)
    with pytest.raises(PromptTooLong, match="HTTP 400"):
        llm.complete(LONG, max_tokens=8, seed=0)
