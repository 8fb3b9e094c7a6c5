"""A suite that does not finish as a whole runs again a module at a time, and tests the environment fails are
reported as the environment's, never repaired: the pipeline with a scripted model, in the real sandbox."""
from __future__ import annotations

from pathlib import Path

from bot.agent import Budgets, RepairOptions
from bot.checkout.repository import load_checkout
from bot.environment.prepare import EnvRequest, prepare_environment
from bot.fix.context import FixRun
from bot.fix.options import FixOptions
from bot.fix.pipeline import fix
from bot.fix.verify.report import to_markdown
from sandbox import open_sandbox

from .test_fix import ByNameLLM

CALC = "def double(x):\n    \"\"\"Twice x.\"\"\"\n    return x + 1\n"
FIXED = "def double(x):\n    \"\"\"Twice x.\"\"\"\n    return x * 2\n"


def repo(root: Path, tests: dict[str, str]) -> Path:
    (root / "tests").mkdir(parents=True)
    (root / "calc.py").write_text(CALC)
    for name, text in tests.items():
        (root / "tests" / name).write_text(text)
    return root


def run_fix(docker_client, root: Path, llm, python: str = "", **options):
    checkout = load_checkout(root)
    env = prepare_environment(checkout, EnvRequest(), client=docker_client, log=print)
    with open_sandbox("docker", image=env.image) as sandbox:
        ctx = FixRun(llm=llm, sandbox=sandbox, pythonpath=env.pythonpath, say=print, python=python,
                     older=("3.9",) if python else ())
        result = fix(checkout, ctx, FixOptions(repair=RepairOptions(budgets=Budgets(iterations=2), samples=1,
                                                                    search=None), **options), model="by-name")
    return result


def test_a_suite_too_slow_as_a_whole_runs_a_module_at_a_time_and_is_still_fixed(tmp_path, docker_client,
                                                                                 sandbox_image):
    slow = "import time\n\n\ndef test_slow():\n    time.sleep(3)\n"
    root = repo(tmp_path / "r", {"test_calc.py": "from calc import double\n\n\ndef test_double():\n"
                                                 "    assert double(3) == 6\n",
                                 "test_slow_a.py": slow, "test_slow_b.py": slow, "test_slow_c.py": slow})
    result = run_fix(docker_client, root, ByNameLLM({"double": FIXED}), suite_timeout_s=5.0, test_timeout_s=20.0)
    assert result.status == "fixed", result.message
    purposes = [r.purpose for r in result.runs]
    assert purposes[:2] == ["reproduce", "reproduce, by module"] and result.runs[0].exit_code != 0
    assert result.runs[1].passed == 3 and result.runs[1].failed == ("tests/test_calc.py::test_double",)
    assert purposes[-1] == "verify" and result.runs[-1].passed == 4  # the verification went a module at a time


def test_failures_of_the_environment_are_reported_with_their_remedy_and_the_codes_repaired(tmp_path, docker_client,
                                                                                           sandbox_image):
    helper = ("import collections\n\n\ndef test_mapping():\n    assert isinstance({}, collections.Mapping)\n")
    root = repo(tmp_path / "mixed", {"test_helpers.py": helper,
                                     "test_calc.py": "from calc import double\n\n\ndef test_double():\n"
                                                     "    assert double(3) == 6\n"})
    llm = ByNameLLM({"double": FIXED})
    mixed = run_fix(docker_client, root, llm, python="3.11")
    assert mixed.status == "fixed" and mixed.exit_code == 0, mixed.message
    [cause] = mixed.environment
    assert cause.kind == "removed-stdlib" and cause.tests == ("tests/test_helpers.py::test_mapping",)
    assert cause.remedy == "--python 3.9" and mixed.message.endswith(
        "; 1 other failing test(s) left alone (1 because of the environment)"), mixed.message
    assert "## The environment, not the code" in to_markdown(mixed) and llm.asked == ["double"]

    only = repo(tmp_path / "only", {"test_helpers.py": helper})
    result = run_fix(docker_client, only, ByNameLLM({}), python="3.11")
    assert result.status == "environment" and result.exit_code == 3 and result.repairs == ()
    assert "collections.Mapping" in result.message and "--python 3.9" in result.message


def test_code_written_for_an_older_python_runs_again_on_the_newest_older_one_fixbot_has(tmp_path, docker_client,
                                                                                         sandbox_image):
    import json

    from bot.fix.run import fix_checkout

    helper = ("import collections\n\n\ndef test_mapping():\n    assert isinstance({}, collections.Mapping)\n")
    root = repo(tmp_path / "old", {"test_helpers.py": helper,
                                   "test_calc.py": "from calc import double\n\n\ndef test_double():\n"
                                                   "    assert double(3) == 6\n"})
    (root / "pyproject.toml").write_text("[project]\nname = 'calc'\nversion = '0'\n")  # no Python named: 3.11
    answers = tmp_path / "answers.json"
    answers.write_text(json.dumps([f"```python\n{FIXED}```"] * 4))
    lines: list[str] = []
    options = FixOptions(repair=RepairOptions(budgets=Budgets(iterations=2), samples=1, search=None))
    result = fix_checkout(load_checkout(root), options, model=f"scripted:{answers}", env_request=EnvRequest(),
                          say=lines.append)
    assert result.status == "fixed" and result.exit_code == 0, result.message
    assert result.env_changes == ("Python 3.9",) and result.environment == ()  # on 3.9 the helper passes
    assert "building it again with Python 3.9" in "\n".join(lines)
    assert "## The environment, rebuilt" in to_markdown(result)


def test_a_pytest_plugin_that_does_not_load_is_left_out_and_reported(tmp_path, docker_client, sandbox_image):
    """An installed plugin whose import raises (an old release on a newer Python) would stop pytest before any
    test; fixbot's probe leaves it out, the suite runs, and the report names it as the environment's. (Installed
    from the checkout, the plugin's module goes with the project's own copy and its entry point stays: importing
    it raises, which is the case.)"""
    root = repo(tmp_path / "plugged", {"test_calc.py": "from calc import double\n\n\ndef test_double():\n"
                                                       "    assert double(3) == 6\n"})
    plugin = root / "vendor" / "brokenplugin"
    plugin.mkdir(parents=True)
    (plugin / "pyproject.toml").write_text(
        "[build-system]\nrequires = ['setuptools']\nbuild-backend = 'setuptools.build_meta'\n\n[project]\n"
        "name = 'brokenplugin'\nversion = '1.0'\n\n[project.entry-points.pytest11]\nbroken = 'brokenplugin'\n")
    (plugin / "brokenplugin.py").write_text("raise TypeError('an integer is required (got type bytes)')\n")
    checkout = load_checkout(root)
    env = prepare_environment(checkout, EnvRequest(setup=("pip install ./vendor/brokenplugin",)),
                              client=docker_client, log=print)
    with open_sandbox("docker", image=env.image) as sandbox:
        ctx = FixRun(llm=ByNameLLM({"double": FIXED}), sandbox=sandbox, pythonpath=env.pythonpath, say=print,
                     python=env.python.version, older=("3.9",))
        result = fix(checkout, ctx, FixOptions(repair=RepairOptions(budgets=Budgets(iterations=2), samples=1,
                                                                    search=None)), model="by-name")
    assert result.status == "fixed", result.message
    [cause] = result.environment
    assert cause.kind == "tool" and cause.what.startswith("the pytest plugin broken does not load")
    assert cause.tests == () and "--python 3.9" in cause.remedy


def test_a_child_process_a_test_leaves_running_does_not_keep_the_finished_run_from_ending(tmp_path, docker_client,
                                                                                         sandbox_image):
    """multiprocessing joins the children left running when Python exits: a test that starts a server process and
    never stops it would hold the whole run until its time limit."""
    from bot.fix.reproduce.command import TestCommand
    from bot.fix.reproduce.testrun import run_tests

    server = ("import multiprocessing\nimport time\n\n\ndef serve():\n    time.sleep(3600)\n\n\n"
              "def test_starts_a_server():\n    multiprocessing.Process(target=serve).start()\n")
    root = repo(tmp_path / "lingers", {"test_server.py": server})
    with open_sandbox("docker", image=sandbox_image) as sandbox:
        run = run_tests(sandbox, load_checkout(root).files, TestCommand.parse("pytest"), timeout=60,
                        test_timeout=10, strict=False)
    assert not run.timed_out and run.passed == {"tests/test_server.py::test_starts_a_server"}
    assert run.duration_s < 30


def test_a_test_waiting_for_a_service_nothing_runs_gets_a_few_seconds_and_is_set_aside(tmp_path, docker_client,
                                                                                     sandbox_image):
    """A client that retries a local server that is not running (a database, an emulator) would use its whole
    time limit; the probe sees nothing listens on the port, cuts the test short and names the service."""
    from bot.fix.reproduce.command import TestCommand
    from bot.fix.reproduce.testrun import run_tests

    client = ("import socket\nimport time\n\n\ndef test_needs_a_database():\n    for _ in range(100):\n"
              "        try:\n            socket.create_connection(('127.0.0.1', 5432), timeout=1).close()\n"
              "            return\n        except OSError:\n            time.sleep(1)\n    assert False\n")
    own = ("import socket\nimport threading\n\n\ndef test_own_server():\n    server = socket.socket()\n"
           "    server.bind(('127.0.0.1', 0))\n    server.listen(1)\n"
           "    threading.Thread(target=lambda: server.accept()[0].close(), daemon=True).start()\n"
           "    socket.create_connection(server.getsockname(), timeout=5).close()\n")
    root = repo(tmp_path / "service", {"test_db.py": client, "test_own.py": own})
    with open_sandbox("docker", image=sandbox_image) as sandbox:
        run = run_tests(sandbox, load_checkout(root).files, TestCommand.parse("pytest"), timeout=120,
                        test_timeout=60, strict=False)
    assert run.failed == {"tests/test_db.py::test_needs_a_database"} and run.duration_s < 30, run.output[-2000:]
    assert run.services == {"tests/test_db.py::test_needs_a_database": ("localhost:5432",)}
    assert "tests/test_own.py::test_own_server" in run.passed  # a server the test runs itself is left alone


def test_a_test_whose_data_file_was_never_committed_is_reported_not_repaired(tmp_path, docker_client, sandbox_image):
    reads = ("from pathlib import Path\n\nfrom calc import double\n\nDATA = Path(__file__).parent / 'data'\n\n\n"
             "def test_small():\n    assert double(int((DATA / 'small.txt').read_text())) == 4\n\n\n"
             "def test_large():\n    assert double(int((DATA / 'large.txt').read_text())) == 40\n")
    root = repo(tmp_path / "r", {"test_data.py": reads})
    (root / "calc.py").write_text(FIXED)
    (root / "tests" / "data").mkdir()
    (root / "tests" / "data" / "small.txt").write_text("2\n")
    result = run_fix(docker_client, root, ByNameLLM({}), python="3.11")
    assert result.status == "environment" and result.exit_code == 3 and result.repairs == (), result.message
    [cause] = result.environment
    assert cause.kind == "missing-test-file" and cause.tests == ("tests/test_data.py::test_large",)
    assert "tests/data/large.txt" in result.message
