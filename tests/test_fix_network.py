"""Tests that need the network (bot/inside/probe_network.py): the sandbox has none, so a test that tries to reach
another machine fails there whatever the code does. The probe records who tried; the pipeline sets those tests
aside instead of repairing code for them, and says so."""
from __future__ import annotations

from bot.checkout.repository import load_checkout
from bot.fix.reproduce.command import TestCommand
from bot.fix.reproduce.testrun import run_tests
from bot.fix.verify.report import to_markdown
from sandbox import open_sandbox

from .test_fix import fix_example
from .test_fix_passes import MIDDLE, TESTS, SeedLLM
from .test_fix_realrepo import make_repo

NET_TESTS = '''
import socket
import threading
import urllib.request


def test_remote():
    urllib.request.urlopen("http://httpbin.example.org/get", timeout=2)


def test_by_name():
    socket.gethostbyname("pypi.example.net")


def test_local_server():
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    threading.Thread(target=lambda: server.accept()[0].close(), daemon=True).start()
    socket.create_connection(server.getsockname(), timeout=2).close()
    socket.getaddrinfo("localhost", 80)


def test_plain_failure():
    assert 1 + 1 == 3
'''


def test_the_probe_names_the_tests_that_tried_to_reach_another_machine(tmp_path, sandbox_image):
    root = make_repo(tmp_path / "net", {"tests/test_net.py": NET_TESTS})
    with open_sandbox("docker", image=sandbox_image, pool_size=1) as sandbox:
        run = run_tests(sandbox, load_checkout(root).files, TestCommand())
    assert run.failed == {"tests/test_net.py::test_remote", "tests/test_net.py::test_by_name",
                          "tests/test_net.py::test_plain_failure"}, run.output
    assert run.passed == {"tests/test_net.py::test_local_server"}
    assert dict(run.network) == {"tests/test_net.py::test_remote": ("httpbin.example.org",),
                                 "tests/test_net.py::test_by_name": ("pypi.example.net",)}


ONLINE = "import urllib.request\n\n\ndef test_online():\n    urllib.request.urlopen('http://example.org', timeout=2)\n"


def test_a_test_that_needs_the_network_is_set_aside_and_the_rest_fixed(tmp_path, docker_client, sandbox_image):
    root = make_repo(tmp_path / "mid", {"mid.py": MIDDLE.replace("[0]", "[-1]"), "tests/test_mid.py": TESTS,
                                        "tests/test_online.py": ONLINE})
    result, _ = fix_example(docker_client, sandbox_image, root, SeedLLM(fix_at=0))
    assert result.status == "fixed", result.message
    assert result.offline == ("tests/test_online.py::test_online",)
    assert "+    return sorted([a, b, c])[1]" in result.diff
    assert "## Need the network (the sandbox has none; not fixed)" in to_markdown(result)


def test_only_tests_that_need_the_network_fail_is_exit_3_without_a_model_call(tmp_path, docker_client,
                                                                              sandbox_image):
    root = make_repo(tmp_path / "online", {"mid.py": MIDDLE.replace("[0]", "[1]"), "tests/test_mid.py": TESTS,
                                           "tests/test_online.py": ONLINE})
    llm = SeedLLM(fix_at=0)
    result, _ = fix_example(docker_client, sandbox_image, root, llm)
    assert (result.status, result.exit_code) == ("needs_network", 3), result.message
    assert "1 failing test(s) need the network" in result.message and llm.calls == []
