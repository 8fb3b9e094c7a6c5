"""`.github/fixbot.yml` and the Action's inputs: defaults, overrides, and errors that name the bad key."""
from __future__ import annotations

import pytest

from bot.config import BadConfig, Config, load_file, with_inputs


def write(tmp_path, text):
    path = tmp_path / "fixbot.yml"
    path.write_text(text)
    return path


def test_missing_or_empty_file_is_the_defaults(tmp_path):
    assert load_file(tmp_path / "nope.yml") == Config()
    assert load_file(write(tmp_path, "")) == Config()


def test_file_values_are_typed(tmp_path):
    cfg = load_file(write(tmp_path, "model: openai:gpt-4o-mini\niterations: 3\nlabels: [bot, fix]\ndraft: false\n"
                                    "paths: ['src/**/*.py']\ntest-command: pytest -x tests\n"))
    assert (cfg.model, cfg.iterations, cfg.labels, cfg.draft, cfg.paths) == \
        ("openai:gpt-4o-mini", 3, ("bot", "fix"), False, ("src/**/*.py",))
    assert cfg.test_command == "pytest -x tests"


@pytest.mark.parametrize("text,named", [("iteratons: 3\n", "iteratons"), ("iterations: three\n", "iterations"),
                                        ("draft: maybe\n", "draft"), ("labels: [1, 2]\n", "labels"),
                                        ("iterations: 0\n", "iterations"), ("- a\n- b\n", "mapping"),
                                        ("model: [unclosed\n", "YAML")])
def test_bad_files_name_the_problem(tmp_path, text, named):
    with pytest.raises(BadConfig, match=named):
        load_file(write(tmp_path, text))


def test_inputs_override_the_file(tmp_path):
    cfg = load_file(write(tmp_path, "iterations: 3\nlabels: [bot]\n"))
    env = {"INPUT_MAX-ITERATIONS": "5", "INPUT_LABELS": "fixbot, ci", "INPUT_DRAFT": "false", "INPUT_MODEL": ""}
    out = with_inputs(cfg, env)
    assert (out.iterations, out.labels, out.draft, out.model) == (5, ("fixbot", "ci"), False, Config().model)
    with pytest.raises(BadConfig, match="dry-run"):
        with_inputs(cfg, {"INPUT_DRY-RUN": "yes"})


def test_the_agent_design_is_one_of_the_three(tmp_path):
    assert Config().agent == "reflect"
    assert load_file(write(tmp_path, "agent: thought-patch\n")).agent == "thought-patch"
    assert with_inputs(Config(), {"INPUT_AGENT": "tool-call"}).agent == "tool-call"
    with pytest.raises(BadConfig, match="`agent` must be one of reflect, thought-patch, tool-call, not 'react'"):
        load_file(write(tmp_path, "agent: react\n"))
    with pytest.raises(BadConfig, match="`agent` must be one of"):
        with_inputs(Config(), {"INPUT_AGENT": "fast"})


def test_samples_are_a_bounded_count_for_every_design(tmp_path):
    assert Config().samples == 3
    assert load_file(write(tmp_path, "samples: 1\n")).samples == 1
    assert with_inputs(Config(), {"INPUT_SAMPLES": "4"}).samples == 4
    with pytest.raises(BadConfig, match="`samples` must be between 1 and 8, not 9"):
        load_file(write(tmp_path, "samples: 9\n"))
    with pytest.raises(BadConfig, match="input `samples` must be a whole number, not 'many'"):
        with_inputs(Config(), {"INPUT_SAMPLES": "many"})
    # every design samples: thought-patch plans, tool-call calls
    assert load_file(write(tmp_path, "agent: tool-call\nsamples: 2\n")).repair().samples == 2
    assert with_inputs(Config(), {"INPUT_AGENT": "thought-patch", "INPUT_SAMPLES": "4"}).repair().samples == 4


def test_the_per_test_time_limit_is_seconds_or_derived(tmp_path):
    assert Config().test_timeout == 0  # derived from the suite's slowest passing test
    assert load_file(write(tmp_path, "test-timeout: 20\n")).test_timeout == 20
    assert with_inputs(Config(), {"INPUT_TEST-TIMEOUT": "7"}).test_timeout == 7
    with pytest.raises(BadConfig, match="`test-timeout` must be between 0 and 3600"):
        load_file(write(tmp_path, "test-timeout: -1\n"))
    with pytest.raises(BadConfig, match="test-timeout"):
        with_inputs(Config(), {"INPUT_TEST-TIMEOUT": "soon"})


def test_the_python_and_the_setup_commands(tmp_path):
    assert (Config().python, Config().setup) == ("", ())
    assert load_file(write(tmp_path, 'python: "3.9"\n')).python == "3.9"
    assert load_file(write(tmp_path, "python: 3.11\n")).python == "3.11"  # unquoted, read as a number
    with pytest.raises(BadConfig, match=r'quote the version, as in `python: "3.10"`'):
        load_file(write(tmp_path, "python: 3.10\n"))
    setup = "setup:\n  - pip install -e .[test]\n  - pip install -r ci/requirements.txt -c ci/constraints.txt\n"
    assert load_file(write(tmp_path, setup)).setup == ("pip install -e .[test]",
                                                       "pip install -r ci/requirements.txt -c ci/constraints.txt")
    assert load_file(write(tmp_path, "setup: make deps\n")).setup == ("make deps",)
    # an Action input is one command per line: a command may hold commas
    inputs = {"INPUT_SETUP": "pip install 'a>=1,<2'\n\npip install -e .\n", "INPUT_PYTHON": "3.13"}
    config = with_inputs(Config(), inputs)
    assert (config.setup, config.python) == (("pip install 'a>=1,<2'", "pip install -e ."), "3.13")


def test_the_choice_among_passing_candidates_is_first_or_likeliest(tmp_path):
    assert Config().choose == "first"
    assert load_file(write(tmp_path, "choose: likeliest\n")).repair().choose == "likeliest"
    assert with_inputs(Config(), {"INPUT_CHOOSE": "likeliest"}).repair().choose == "likeliest"
    with pytest.raises(BadConfig, match="`choose` must be one of first, likeliest, not 'best'"):
        load_file(write(tmp_path, "choose: best\n"))


def test_the_file_the_fix_command_and_the_pipeline_share_one_default_per_repair_option():
    from bot.agent import FIX_REPAIR
    from bot.cli.main import build_parser
    from bot.fix.options import FixOptions
    assert Config().repair() == FixOptions().repair == FIX_REPAIR
    fix = build_parser().parse_args(["fix", "."])
    assert (fix.iterations, fix.agent, fix.max_targets, fix.wall, fix.choose) == \
        (Config().iterations, Config().agent, Config().max_targets, Config().wall_s, Config().choose)
