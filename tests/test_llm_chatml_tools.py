"""The tool-calling prompt for llama.cpp models: the chatml-function-calling format, never HTML-escaped."""
from __future__ import annotations

from bot.llm import Message, Tool, ToolCall
from bot.llm.chatml_tools import render

TOOL = Tool("run_tests", "Run the tests.", {"type": "object", "properties": {"code": {"type": "string"}}})


def test_a_conversation_renders_as_chatml_ending_at_the_required_call():
    call = ToolCall("c1", "run_tests", '{"code": "def f(x) -> int:\\n    return x < 1 and \\"a\\""}')
    prompt = render([Message("system", "Fix it."), Message("user", 'def f(x) -> int: return x > 1 and "a" & b'),
                     Message("assistant", "", tool_calls=(call,)), Message("tool", "FAILED\nassert 1 < 0", "", "c1")],
                    [TOOL], "run_tests")
    assert prompt.startswith("<|im_start|>system\nFix it.\n\nYou have access to the following functions:\n")
    assert 'functions.run_tests:\nRun the tests.\n{"type": "object"' in prompt
    assert '<|im_start|>user\ndef f(x) -> int: return x > 1 and "a" & b<|im_end|>\n' in prompt  # not escaped
    assert f"<|im_start|>assistant\nfunctions.run_tests:\n{call.arguments}<|im_end|>\n" in prompt
    assert "<|im_start|>user\nResult of the call:\nFAILED\nassert 1 < 0<|im_end|>\n" in prompt
    assert prompt.endswith("<|im_start|>assistant\nfunctions.run_tests:\n") and "&gt;" not in prompt


def test_without_a_system_message_the_functions_still_come_first():
    prompt = render([Message("user", "go")], [TOOL], "run_tests")
    assert prompt.startswith("<|im_start|>system\nYou have access to the following functions:")
