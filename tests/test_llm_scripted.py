"""The scripted model that agent tests will drive."""
from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

from bot.llm import LLM, BadModelSpec, Message, ScriptedLLM, ScriptExhausted, open_llm

ASK = [Message("system", "you fix code"), Message("user", "fix add(a, b)")]


def test_replays_in_order_then_says_it_ran_out() -> None:
    llm = ScriptedLLM(["first answer", {"text": "second"}])  # type: ignore[list-item]
    assert isinstance(llm, LLM)
    one = llm.complete(ASK)
    assert (one.text, one.prompt_tokens, one.completion_tokens, one.finish_reason) == ("first answer", 6, 2, "stop")
    assert one.latency_s >= 0
    assert llm.complete(ASK, temperature=0.7, seed=3).text == "second"
    with pytest.raises(ScriptExhausted, match="has 2 answer\\(s\\) and was asked for answer 3: add answers"):
        llm.complete(ASK)
    assert llm.calls == [ASK, ASK]


@pytest.mark.parametrize("name, body", [
    ("a.json", json.dumps(["x = 1", {"text": "y = 2"}])),
    ("a.yaml", "- x = 1\n- text: y = 2\n"),
    ("a.yml", "[\"x = 1\", {text: \"y = 2\"}]"),
])
def test_loads_json_and_yaml_scripts(tmp_path: Path, name: str, body: str) -> None:
    path = tmp_path / name
    path.write_text(body)
    llm = open_llm(f"scripted:{path}")
    assert [llm.complete(ASK).text for _ in range(2)] == ["x = 1", "y = 2"]


@pytest.mark.parametrize("body, match", [
    ('{"text": "not a list"}', "must hold a list of answers, not a dict"),
    ("[1, 2]", "answer 1 must be a string or a mapping"),
    ('[{"txt": "typo"}]', "answer 1 must be a string or a mapping with a string 'text'"),
    ("[unclosed", "not valid JSON/YAML"),
])
def test_bad_scripts_are_clear_errors(tmp_path: Path, body: str, match: str) -> None:
    path = tmp_path / "s.json"
    path.write_text(body)
    with pytest.raises(BadModelSpec, match=match):
        open_llm(f"scripted:{path}")


def test_missing_script_file(tmp_path: Path) -> None:
    with pytest.raises(BadModelSpec, match="cannot read the script .*nope.json"):
        open_llm(f"scripted:{tmp_path / 'nope.json'}")


def test_threads_never_get_the_same_answer() -> None:
    llm = ScriptedLLM([str(i) for i in range(200)])
    got: list[str] = []
    lock = threading.Lock()

    def worker() -> None:
        for _ in range(50):
            text = llm.complete(ASK).text
            with lock:
                got.append(text)

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    assert sorted(got, key=int) == [str(i) for i in range(200)]


def test_a_script_can_answer_with_tool_calls(tmp_path: Path) -> None:
    from bot.llm import Tool, ToolCall, ToolLLM

    script = tmp_path / "s.yaml"
    script.write_text('- {tool_call: {name: run_tests, arguments: {code: "def f(): pass"}}}\n- plain text\n')
    llm = open_llm(f"scripted:{script}")
    assert isinstance(llm, ToolLLM)
    tool = Tool("run_tests", "run", {"type": "object"})
    first = llm.complete_with_tools([Message("user", "go")], [tool])
    assert first.tool_calls == (ToolCall("call_1", "run_tests", '{"code": "def f(): pass"}'),) and first.text == ""
    assert llm.complete_with_tools([Message("user", "go")], [tool]).tool_calls == ()
    script.write_text("- {tool_call: {arguments: {}}}\n")
    with pytest.raises(BadModelSpec, match="a tool_call needs a string 'name'"):
        open_llm(f"scripted:{script}")
