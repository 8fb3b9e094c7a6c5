"""The examples protocol's vote (eval/behaviour.py, choose/select.py): more inputs from the visible tests, what
candidates return on them in the sandbox, and a replay where the first passing answer overfits."""
from __future__ import annotations

import json

import pytest

from eval.behaviour import BehaviourJudge, probe_inputs, visible_calls
from eval.tasks import load_tasks

from .conftest import run_fixbot

TESTS = """def check(candidate):
    assert candidate([1.0, 2.0, 3.0], 0.5) == False
    assert abs(candidate([1.0, 2.8], 0.3) - 1) < 1e-6
    assert candidate(sorted([3, 1]), 0.5) == True
check(has_close_elements)
"""


def test_the_calls_are_the_visible_tests_literal_ones():
    assert visible_calls(TESTS, "has_close_elements") == [([1.0, 2.0, 3.0], 0.5), ([1.0, 2.8], 0.3)]
    assert visible_calls("def check(f):\n    assert f('a', k=1)\n", "g") == []  # keywords: not a plain call
    assert visible_calls("this is not python", "f") == []


def test_each_input_varies_one_argument_within_its_type():
    inputs = probe_inputs([([1.0, 2.0], 3), ("ab", True)], limit=100)
    assert inputs[:2] == [([1.0, 2.0], 3), ("ab", True)]  # the visible ones first
    assert ([], 3) in inputs and ([2.0, 1.0], 3) in inputs and ([1.0, 2.0], 4) in inputs and ([1.0, 2.0], -3) in inputs
    assert ("", True) in inputs and ("ba", True) in inputs and ("ab", False) in inputs
    assert {tuple(type(a) for a in args) for args in inputs} == {(list, int), (str, bool)}
    assert len(inputs) == len({repr(i) for i in inputs})
    assert probe_inputs([([1.0, 2.0], 3), ("ab", True)], limit=5)[2:5] == [([], 3), ("", True), ([1.0], 3)]


def test_arguments_of_one_type_are_also_swapped():
    """A triangle's sides, checked only with the hypotenuse last (Python/157's bug), differ from the right check
    only when the sides come in another order."""
    inputs = probe_inputs([(3, 4, 5)], limit=100)
    assert inputs[1:4] == [(4, 3, 5), (5, 4, 3), (3, 5, 4)]  # the swaps first, before the varied values
    assert probe_inputs([("a", 1, "a")], limit=100)[1] != ("a", 1, "a")  # equal values: no swap, no duplicate
    assert not any(args == (1, "a") for args in probe_inputs([("a", 1)], limit=100))  # never across types


def test_letters_and_items_the_examples_never_show_are_reached():
    """Python/51 keeps `y` among the vowels, and no example holds a `y`; Python/151's fix counts 1.5 as odd, and
    no example holds a fraction."""
    strings = [args[0] for args in probe_inputs([("abcdef\nghijklm",)], limit=100)]
    assert "nopqrs\ntuvwxyz" in strings
    lists = [args[0] for args in probe_inputs([([1, 3, 2, 0],)], limit=100)]
    assert [2, 4, 3, 1] in lists and [1, 3, 2, 0, 0.5] in lists
    assert (["nn", "o"],) in probe_inputs([(["aa", "b"],)], limit=100)
    assert not any(0.5 in args[0] for args in probe_inputs([([True, False],)], limit=100))  # bools are not integers


@pytest.fixture(scope="module")
def task(shared_data):
    return load_tasks(shared_data / "humanevalpack-python.jsonl")[0]  # has_close_elements


def test_the_judge_tells_behaviours_apart_in_the_sandbox(docker_sandbox, task):
    inputs = (([1.0, 2.0, 3.0], 0.5), ([1.0, 2.0, 3.0, 3.0], 0.5), ([], 0.5))
    judge = BehaviourJudge(docker_sandbox, task.buggy_module, task.entry_point, inputs)
    right = "def has_close_elements(numbers, threshold):\n    return any(abs(a - b) < threshold for i, a in " \
            "enumerate(numbers) for b in numbers[i + 1:])\n"
    also_right = right.replace("abs(a - b) < threshold", "-threshold < a - b < threshold")
    overfit = "def has_close_elements(numbers, threshold):\n    return len(numbers) > 5\n"
    loops = "def has_close_elements(numbers, threshold):\n    while True:\n        pass\n"
    raises = "def has_close_elements(numbers, threshold):\n    return 1 / len(numbers) > 1\n"
    sources = [right, also_right, overfit, loops, raises]
    given = judge.outputs(sources, [([1.0, 1.1], 0.2)])
    a, b, c, d, e = [own + extra for own, extra in zip(judge.outputs(sources), given)]
    assert a == b == ["False", "True", "False", "True"]  # two spellings of one behaviour, and the given input last
    assert c == ["False", "False", "False", "False"]
    assert d == ["timeout"] * 4
    assert e == ["False", "False", "!ZeroDivisionError", "False"]


OVERFIT = """```python
def has_close_elements(numbers, threshold):
    for idx, elem in enumerate(numbers):
        for idx2, elem2 in enumerate(numbers):
            if idx != idx2:
                distance = elem - elem2
                if distance < threshold and distance > 0:
                    return True

    return False
```"""
RIGHT = OVERFIT.replace("distance = elem - elem2", "distance = abs(elem - elem2)").replace(
    " and distance > 0", "")


def test_under_the_examples_protocol_the_vote_replaces_a_fix_that_overfits(data_file, tmp_path, sandbox_image):
    """The vote is on by default under the examples protocol."""
    script = tmp_path / "answers.json"  # the first answer passes the two examples and fails the hidden tests
    # then three more answers, and the model's asserts from the docstring: one wrong (no candidate passes it), one
    # that the overfit fails, one that is not a literal call
    asserts = "```python\nassert has_close_elements([1.0, 2.0], 5.0) == False\n" \
              "assert has_close_elements([2.0, 1.9], 0.5) == True\nassert has_close_elements(list(), 1.0) == False\n```"
    script.write_text(json.dumps([OVERFIT, RIGHT, RIGHT, RIGHT.replace("abs(elem - elem2)", "abs(elem2 - elem)"),
                                  asserts]))
    out = tmp_path / "out"
    r = run_fixbot("eval", "--data", str(data_file), "--tasks", "0", "--protocol", "examples", "--iterations", "1",
                   "--model", f"scripted:{script}", "--out", str(out), "--references", "0")
    assert r.returncode == 0, r.stderr[-2000:]
    (row,) = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    assert row["passed"] and "abs(elem - elem2)" in row["final_code"]
    # the scripted model cannot score texts: the asserts decide
    assert row["selection"] == {"candidates": 3, "groups": 2, "votes": 3, "changed": True, "drawn": 3, "asserts": 2,
                                "agreed": 1, "scored": 0, "neighbours": 0, "references": 0, "expected": 0, "met": 0,
                                "rewritten": False, "set_aside": 0}
    assert [a["node"] for a in row["attempts"]][-1] == "asserts" and row["attempts"][-1]["outcome"] == "written"
    summary = json.loads((out / "summary.json").read_text())
    assert (summary["selection_changed"], summary["selection_changed_passed"]) == (1, 1)
    assert summary["selection_with_asserts"] == 1
    assert "vote: 1 fixes chosen, 1 among several candidates; 1 not the first found" in r.stdout
    assert json.loads((out / "run.json").read_text())["vote"] is True


def test_references_written_from_the_docstring_replace_fixes_that_all_overfit(data_file, tmp_path, sandbox_image):
    """Every answer is the overfit fix; the three functions written from the docstring (the default under the vote)
    pass the examples and agree on the varied inputs, where the overfit one differs: a reference is the fix, whole."""
    reference = "```python\ndef has_close_elements(numbers, threshold):\n    return any(abs(a - b) < threshold " \
                "for i, a in enumerate(numbers) for b in numbers[i + 1:])\n```"
    script = tmp_path / "answers.json"
    script.write_text(json.dumps([OVERFIT] * 4 + [reference] * 3))
    out = tmp_path / "out"
    r = run_fixbot("eval", "--data", str(data_file), "--tasks", "0", "--protocol", "examples", "--iterations", "1",
                   "--model", f"scripted:{script}", "--out", str(out))
    assert r.returncode == 0, r.stderr[-2000:]
    (row,) = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    assert row["passed"] and "abs(a - b) < threshold" in row["final_code"]
    s = row["selection"]
    assert (s["references"], s["rewritten"], s["changed"]) == (3, True, True) and s["met"] == s["expected"] > 0
    assert [a["node"] for a in row["attempts"]][-3:] == ["reference"] * 3
    assert json.loads((out / "run.json").read_text())["references"] == 3
    assert "a reference chosen in 1" in r.stdout


def test_references_need_the_vote_and_two_of_them(data_file):
    r = run_fixbot("eval", "--data", str(data_file), "--tasks", "0", "--references", "3")
    assert r.returncode == 2 and "use it with --protocol examples" in r.stderr
    r = run_fixbot("eval", "--data", str(data_file), "--tasks", "0", "--protocol", "examples", "--references", "1")
    assert r.returncode == 2 and "at least 2" in r.stderr


@pytest.fixture()
def data_file(shared_data):
    return shared_data / "humanevalpack-python.jsonl"


def test_the_vote_is_for_weak_tests(data_file):
    r = run_fixbot("eval", "--data", str(data_file), "--tasks", "0", "--vote")
    assert r.returncode == 2 and "use it with --protocol examples" in r.stderr

