"""ModelPool: one model per worker thread, each in a process of its own (`fixbot eval --workers N` with a
local model). The scripted model stands in for llama.cpp here: the pool forwards calls, it does not infer."""
from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

from bot.llm import LLM, Message, ModelUnavailable, ScriptExhausted, ToolLLM
from bot.llm.process_pool import ModelPool

ASK = [Message("user", "fix add(a, b)")]


def script(tmp_path: Path, answers: list[object]) -> str:
    path = tmp_path / "answers.json"
    path.write_text(json.dumps(answers))
    return f"scripted:{path}"


def test_each_thread_keeps_a_model_process_of_its_own(tmp_path: Path) -> None:
    # Every process replays its own copy of the script: two threads that both get "first", then both "second",
    # were answered by two processes, each keeping its place between calls.
    with ModelPool(script(tmp_path, ["first", "second"]), 2) as pool:
        assert isinstance(pool, LLM) and isinstance(pool, ToolLLM)
        got: dict[int, list[str]] = {}
        start = threading.Barrier(2)

        def worker(i: int) -> None:
            start.wait()
            got[i] = [pool.complete(ASK).text, pool.complete(ASK, temperature=0.5, seed=1).text]

        threads = [threading.Thread(target=worker, args=(i,)) for i in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=60)
        assert got == {0: ["first", "second"], 1: ["first", "second"]}


def test_a_backend_error_reaches_the_caller_as_itself(tmp_path: Path) -> None:
    with ModelPool(script(tmp_path, ["only"]), 1) as pool:
        assert pool.complete(ASK).text == "only"
        with pytest.raises(ScriptExhausted, match="has 1 answer\\(s\\) and was asked for answer 2"):
            pool.complete(ASK)
        with pytest.raises(ScriptExhausted):  # the process is still there, and still knows where it is
            pool.complete(ASK)


def test_a_model_that_cannot_load_fails_when_the_pool_opens(tmp_path: Path) -> None:
    missing = tmp_path / "missing.gguf"
    with pytest.raises(ModelUnavailable, match="missing.gguf"):
        ModelPool(f"llamacpp:{missing}", 2, n_threads=1)


def test_more_threads_than_processes_is_refused(tmp_path: Path) -> None:
    with ModelPool(script(tmp_path, ["a", "b"]), 1) as pool:
        assert pool.complete(ASK).text == "a"
        errors: list[BaseException] = []

        def other() -> None:
            try:
                pool.complete(ASK)
            except BaseException as exc:
                errors.append(exc)

        t = threading.Thread(target=other)
        t.start()
        t.join(timeout=60)
        assert len(errors) == 1 and "more threads than the 1 model processes" in str(errors[0])


def test_several_answers_at_once_come_one_after_another_from_a_backend_without_them(tmp_path: Path) -> None:
    with ModelPool(script(tmp_path, ["a", "b", "c"]), 1) as pool:
        got = pool.complete_many(ASK, temperatures=[0.0, 0.8, 0.8], seeds=[0, 1000, 2000])
        assert [c.text for c in got] == ["a", "b", "c"]


def test_a_backend_that_cannot_score_texts_says_so(tmp_path: Path) -> None:
    from contextlib import closing

    from bot.agent.choose.likelihood import coder_scores
    from bot.llm import ScoringLLM, ScoringUnsupported
    from bot.llm.lazy import LazyModel

    for llm in (ModelPool(script(tmp_path, ["a"]), 1), LazyModel(script(tmp_path, ["a"]))):
        with closing(llm):
            assert isinstance(llm, ScoringLLM)  # the wrappers have the method; the scripted model behind does not
            with pytest.raises(ScoringUnsupported, match="cannot score texts"):
                llm.logprobs("# add\n", ["    return a + b\n"])
            assert coder_scores(llm, "def f():\n    '''One.'''\n    return 1\n", ["def f():\n    return 2\n"]) is None
