"""Model latency on a fixed repair prompt: in process, and through a local llama_cpp.server.

    python bench/llm_latency.py --model llamacpp:bundled [--runs 3] [--max-tokens 512] [--json] [--no-server]

Each run makes three calls: the full answer (latency, token counts); the same call again, whose prompt the
backend's cache holds (llama.cpp reuses the KV cache of a prefix), so its time is the generation's; and a
one-token answer to a prompt that differs in its first words (prompt evaluation, cold). prompt tok/s = prompt
tokens / one-token latency; generated tok/s = completion tokens / the repeated call's latency (a backend
without a prompt cache shows less than its real speed). Subtracting the one-token call's time from the full
call's instead gave noise, and on a busy machine a negative time. Every run's full answer comes from the same
prompt, so greedy decoding gives the same answer each run. Medians are printed.
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout without installing

from bot.llm import LLM, LLMError, Message, open_llm, parse_model_spec  # noqa: E402

SYSTEM = """You are fixbot, an automated program repair assistant working inside a continuous integration system.
You are given one Python function that fails its unit tests, the failing test output, and the tests themselves.
Find the bug and return the corrected function.

Rules:
- Keep the function's name, signature and docstring unchanged.
- Change as little as possible; do not rename variables or reformat unrelated lines.
- Do not add imports unless the fix needs one.
- Reply with a short explanation of the bug (one or two sentences), then the whole corrected function in a
  single ```python code block. Do not include the tests in your answer."""

BUGGY = '''def merge_intervals(intervals):
    """Merge overlapping closed intervals.

    Args:
        intervals: a list of (start, end) pairs with start <= end, in any order.

    Returns:
        A list of non-overlapping (start, end) pairs sorted by start, where any two intervals
        that overlap or touch have been merged into one.
    """
    if not intervals:
        return []
    ordered = sorted(intervals)
    merged = [ordered[0]]
    for start, end in ordered[1:]:
        last_start, last_end = merged[-1]
        if start < last_end:
            merged[-1] = (last_start, end)
        else:
            merged.append((start, end))
    return merged
'''

TESTS = '''def test_merge_intervals():
    assert merge_intervals([]) == []
    assert merge_intervals([(1, 3)]) == [(1, 3)]
    assert merge_intervals([(1, 3), (2, 6), (8, 10), (15, 18)]) == [(1, 6), (8, 10), (15, 18)]
    assert merge_intervals([(1, 4), (4, 5)]) == [(1, 5)]
    assert merge_intervals([(1, 10), (2, 3)]) == [(1, 10)]
    assert merge_intervals([(5, 6), (1, 2)]) == [(1, 2), (5, 6)]
'''

FAILURE = '''FAILED tests/test_intervals.py::test_merge_intervals - assert [(1, 4), (4, 5)] == [(1, 5)]
    def test_merge_intervals():
        assert merge_intervals([]) == []
        assert merge_intervals([(1, 3)]) == [(1, 3)]
        assert merge_intervals([(1, 3), (2, 6), (8, 10), (15, 18)]) == [(1, 6), (8, 10), (15, 18)]
>       assert merge_intervals([(1, 4), (4, 5)]) == [(1, 5)]
E       assert [(1, 4), (4, 5)] == [(1, 5)]
E         At index 0 diff: (1, 4) != (1, 5)
E         Left contains one more item: (4, 5)
'''


def repair_prompt(nonce: int) -> list[Message]:
    user = (f"The function below fails its tests.\n\n```python\n{BUGGY}```\n\nTest output:\n```\n{FAILURE}```\n\n"
            f"Tests:\n```python\n{TESTS}```\n\nReturn the corrected function.")
    return [Message("system", f"Session {nonce}. {SYSTEM}"), Message("user", user)]


def measure(llm: LLM, runs: int, max_tokens: int) -> dict[str, Any]:
    rows = []
    for i in range(runs):
        full = llm.complete(repair_prompt(1), temperature=0.0, max_tokens=max_tokens, seed=0)
        warm = llm.complete(repair_prompt(1), temperature=0.0, max_tokens=max_tokens, seed=0)  # prompt cached
        first = llm.complete(repair_prompt(2), temperature=0.0, max_tokens=1, seed=0)
        rows.append({"latency_s": full.latency_s, "prompt_s": first.latency_s,
                     "prompt_tokens": full.prompt_tokens, "completion_tokens": full.completion_tokens,
                     "prompt_tok_s": first.prompt_tokens / max(first.latency_s, 1e-9),
                     "gen_tok_s": warm.completion_tokens / max(warm.latency_s, 1e-9)})
        print(f"  run {i + 1}/{runs}: {full.latency_s:.1f} s for {full.prompt_tokens} + {full.completion_tokens} "
              f"tokens (prompt {first.latency_s:.2f} s)", file=sys.stderr)
    med = {k: statistics.median(r[k] for r in rows) for k in rows[0]}
    return {k: round(v, 2) if isinstance(v, float) else v for k, v in med.items()}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default="llamacpp:bundled")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--max-tokens", type=int, default=512)
    ap.add_argument("--json", action="store_true", help="print one JSON line instead of a table")
    ap.add_argument("--no-server", action="store_true", help="skip the llama_cpp.server comparison")
    args = ap.parse_args(argv)
    try:
        spec = parse_model_spec(args.model)
        print(f"in process: {spec}", file=sys.stderr)
        llm = open_llm(spec, progress=not args.json) if spec.kind == "llamacpp" else open_llm(spec)
        result: dict[str, Any] = {"model": str(spec), "runs": args.runs, **measure(llm, args.runs, args.max_tokens)}
        model_path = getattr(llm, "path", None)
        close = getattr(llm, "close", None)
        if close:
            close()  # free the cores' caches and memory for the server
        if not args.no_server and model_path is not None:
            from bot.llm.llama_server import serve_gguf

            with serve_gguf(model_path) as base:
                print(f"through llama_cpp.server at {base}", file=sys.stderr)
                server = measure(open_llm("openai:bundled", api_base=base, timeout_s=600), args.runs,
                                 args.max_tokens)
            result.update({f"server_{k}": v for k, v in server.items()})
    except LLMError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(result))
    else:
        print_table(result)
    return 0


def print_table(r: dict[str, Any]) -> None:
    print(f"{r['model']}, median of {r['runs']} run(s), {r['prompt_tokens']} prompt + {r['completion_tokens']} "
          f"generated tokens")
    print(f"{'':12} {'prompt tok/s':>12} {'gen tok/s':>10} {'latency s':>10}")
    print(f"{'in process':12} {r['prompt_tok_s']:>12} {r['gen_tok_s']:>10} {r['latency_s']:>10}")
    if "server_latency_s" in r:
        print(f"{'server':12} {r['server_prompt_tok_s']:>12} {r['server_gen_tok_s']:>10} {r['server_latency_s']:>10}")
        if r["server_completion_tokens"] != r["completion_tokens"]:
            # llama_cpp.server's default repeat_penalty is 1.1 (in process: 1.0), so its greedy answer differs:
            # compare the tok/s columns, not the latencies.
            print(f"note: the server generated {r['server_completion_tokens']} tokens (its default repeat_penalty "
                  f"is 1.1); compare tok/s, not latency")


if __name__ == "__main__":
    sys.exit(main())
