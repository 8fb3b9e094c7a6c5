"""The Docker sandbox's contract: typed results, fresh work dirs, batches, hardening, odd input, cleanup."""
from __future__ import annotations

import subprocess
import sys
import textwrap
import threading
import time

import pytest

from sandbox import BadJob, Job, RunResult
from sandbox.containers import LABEL, OWNER_LABEL

from .conftest import REPO, run_fixbot, session_containers

pytestmark = pytest.mark.timeout(240)


def test_result_is_typed_and_faithful(docker_sandbox):
    result = docker_sandbox.run({"t.py": "import sys\nprint('out')\nprint('err', file=sys.stderr)\nsys.exit(3)\n"},
                                ["python3", "t.py"])
    assert isinstance(result, RunResult)
    assert (result.exit_code, result.stdout, result.stderr) == (3, "out\n", "err\n")
    assert not (result.timed_out or result.oom_killed or result.truncated) and 0 < result.duration_s < 5


def test_pytest_assertion_rewriting_reaches_the_output(docker_sandbox):
    files = {"calc.py": "def half(x):\n    return x / 3\n",
             "test_calc.py": "from calc import half\n\ndef test_half():\n    assert half(3) == 1.5\n"}
    result = docker_sandbox.run(files, ["python3", "-m", "pytest", "-q", "-p", "no:cacheprovider"], timeout=60)
    assert result.exit_code == 1
    assert "assert 1.0 == 1.5" in result.stdout and "where 1.0 = half(3)" in result.stdout


def test_each_run_gets_a_fresh_work_dir(docker_sandbox):
    first = docker_sandbox.run({"a.txt": "1"}, ["sh", "-c", "pwd; ls -A; echo x > left.txt"])
    second = docker_sandbox.run({"b.txt": "2"}, ["sh", "-c", "pwd; ls -A"])
    assert first.ok and second.ok
    assert second.stdout.split("\n")[0] != first.stdout.split("\n")[0]
    assert "left.txt" not in second.stdout and "a.txt" not in second.stdout and "b.txt" in second.stdout


def test_batch_keeps_order_and_per_job_timeouts(docker_sandbox):
    jobs = [Job({"t.py": f"print({i})"}, ["python3", "t.py"], 20) for i in range(9)]
    jobs[4] = Job({"t.py": "import time; time.sleep(60)"}, ["python3", "t.py"], 1.5)
    jobs[6] = Job({"t.py": "raise SystemExit(7)"}, ["python3", "t.py"], 20)
    start = time.monotonic()
    results = docker_sandbox.run_batch(jobs)
    assert time.monotonic() - start < 20
    assert len(results) == 9
    assert results[4].timed_out and 1.4 < results[4].duration_s < 5
    assert results[6].exit_code == 7
    assert [r.stdout.strip() for i, r in enumerate(results) if i not in (4, 6)] == \
        [str(i) for i in range(9) if i not in (4, 6)]


def test_a_batch_larger_than_the_work_dir_runs_in_requests_that_fit(docker_sandbox):
    """Whole-checkout jobs of a large project (a search's mutants that each need a process of their own): 80 jobs
    of 8 MB are 640 MB, past the 256 MB work dir even split over two containers, and used to fail the whole
    batch with ENOSPC."""
    from sandbox.docker_sandbox import requests_of

    blob = b"x" * (8 * 1024 * 1024)
    jobs = [Job({"big.bin": blob, "t.py": f"import os; print({i}, os.path.getsize('big.bin'))"},
                ["python3", "t.py"], 30) for i in range(80)]
    assert [len(part) for part in requests_of(jobs, 64 * 1024 * 1024)] == [7] * 11 + [3]
    results = docker_sandbox.run_batch(jobs)
    assert [r.stdout.split() for r in results] == [[str(i), str(len(blob))] for i in range(80)]


def test_odd_file_names_binary_content_and_exec_bits(docker_sandbox):
    files = {"dir with space/ü \"quoted\" 'name'.txt": "unicode ok\n", "bin.dat": bytes(range(256)),
             "run.sh": "#!/bin/sh\necho from-script\n"}
    result = docker_sandbox.run(files, ["sh", "-c", "cat 'dir with space/ü \"quoted\" '\\''name'\\''.txt'; "
                                                    "./run.sh; wc -c < bin.dat"])
    assert result.ok, result
    assert result.stdout.split() == ["unicode", "ok", "from-script", "256"]


def test_non_utf8_output_is_kept_as_escapes(docker_sandbox):
    result = docker_sandbox.run({"t.py": "import sys\nsys.stdout.buffer.write(b'ok \\xff\\xfe end')\n"},
                                ["python3", "t.py"])
    assert result.ok and result.stdout == "ok \\xff\\xfe end"


def test_env_and_collected_files_come_back(docker_sandbox):
    code = ("import os, pathlib\n"
            "pathlib.Path('out').mkdir()\n"
            "pathlib.Path('out/report.xml').write_text(os.environ['FIXBOT_X'] + ' \\u00e9')\n"
            "pathlib.Path('big.txt').write_bytes(b'x' * (9 * 1024 * 1024))\n"
            "os.symlink('/etc/passwd', 'link.txt')\n")
    result = docker_sandbox.run_batch([Job({"w.py": code}, ["python3", "w.py"], 30, env={"FIXBOT_X": "hello"},
                                           collect=("out/report.xml", "missing.xml", "big.txt", "link.txt"))])[0]
    assert result.exit_code == 0, result.stderr
    # the symlink out of the work dir is not followed; the 9 MiB file is over the cap: both absent, not cut
    assert result.files == {"out/report.xml": "hello \u00e9"}


def test_bad_env_and_collect_are_refused(docker_sandbox):
    with pytest.raises(BadJob):
        docker_sandbox.run_batch([Job({}, ["true"], 5, env={"BAD NAME": "x"})])
    with pytest.raises(BadJob):
        docker_sandbox.run_batch([Job({}, ["true"], 5, collect=("../etc/passwd",))])


@pytest.mark.parametrize("name", ["../escape.py", "/etc/passwd", "a/../../b", "", "nul\x00byte"])
def test_unsafe_file_names_are_refused(docker_sandbox, name):
    with pytest.raises(BadJob, match="bad file name"):
        docker_sandbox.run({name: "x"}, ["true"])


@pytest.mark.parametrize("command,timeout", [([], 5), ("python3 t.py", 5), (["true"], 0), (["true"], -1)])
def test_bad_commands_and_timeouts_are_refused(docker_sandbox, command, timeout):
    with pytest.raises(BadJob):
        docker_sandbox.run({}, command, timeout=timeout)


def test_missing_command_is_exit_127(docker_sandbox):
    result = docker_sandbox.run({}, ["no-such-program", "--flag"])
    assert result.exit_code == 127 and "no-such-program" in result.stderr


def test_concurrent_callers_share_the_pool(docker_sandbox):
    results: list[RunResult] = []
    threads = [threading.Thread(target=lambda i=i: results.append(
        docker_sandbox.run({"t.py": f"print({i})"}, ["python3", "t.py"]))) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert sorted(int(r.stdout) for r in results) == list(range(6))


def test_containers_are_hardened(docker_client, docker_sandbox):
    docker_sandbox.run({}, ["true"])
    [cid, *_] = session_containers(docker_client, docker_sandbox.session)
    attrs = docker_client.api.inspect_container(cid)
    host = attrs["HostConfig"]
    assert host["NetworkMode"] == "none" and host["ReadonlyRootfs"] is True
    assert host["CapDrop"] == ["ALL"] and "no-new-privileges" in host["SecurityOpt"]
    assert host["Memory"] == docker_sandbox.limits.memory_mb * 2**20 and host["PidsLimit"] == docker_sandbox.limits.pids
    assert host["NanoCpus"] == int(docker_sandbox.limits.cpus * 1e9)
    assert attrs["Config"]["User"] == "65534:65534" and attrs["Config"]["Labels"][LABEL] == docker_sandbox.session
    assert [m["Type"] for m in attrs["Mounts"]] == [] and host["Binds"] is None, "no host path may be mounted"
    assert list(host["Tmpfs"]) == ["/work"]


def test_a_batch_whose_container_is_killed_from_outside_runs_again_in_a_fresh_one(docker_client, sandbox_image):
    """The OOM killer once took the runner itself right after a job it killed; the batch's jobs were all lost."""
    from sandbox.docker_sandbox import DockerSandbox

    killed: list[str] = []

    def kill_the_batch_container(session: str) -> None:
        deadline = time.monotonic() + 60
        while not killed and time.monotonic() < deadline:
            if found := session_containers(docker_client, session):
                time.sleep(1.0)  # its jobs under way
                docker_client.api.kill(found[0])
                killed.append(found[0])
            time.sleep(0.05)

    jobs = [Job(files={}, command=["sh", "-c", "sleep 3; echo done"], timeout=30)] * 2
    with DockerSandbox(image=sandbox_image, pool_size=1, client=docker_client) as sandbox:
        killer = threading.Thread(target=kill_the_batch_container, args=(sandbox.session,))
        killer.start()
        results = sandbox.run_batch(jobs)
        killer.join()
        assert killed, "the batch's container was never found"
        assert [(r.exit_code, r.stdout) for r in results] == [(0, "done\n")] * 2, results
        assert killed[0] not in session_containers(docker_client, sandbox.session)


CHILD = """
import signal, sys, time
# A child of a background job inherits SIGINT ignored (POSIX, no job control); a user's Ctrl-C is not.
signal.signal(signal.SIGINT, signal.default_int_handler)
from sandbox.docker_sandbox import DockerSandbox
sb = DockerSandbox(pool_size=2)
sb.run_batch([__import__('sandbox').Job({{}}, ['true'], 5)] * 2)
print(sb.session, flush=True)
{after}
"""


@pytest.mark.parametrize("how", ["sigint", "sigkill", "normal-exit"])
def test_containers_are_removed_when_the_host_process_ends(docker_client, sandbox_image, how):
    after = "sb.close()" if how == "normal-exit" else "time.sleep(600)"
    proc = subprocess.Popen([sys.executable, "-c", CHILD.format(after=after)], cwd=REPO,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    session = proc.stdout.readline().strip()
    assert session, proc.stderr.read()
    assert how == "normal-exit" or len(session_containers(docker_client, session)) == 2
    if how == "sigint":
        proc.send_signal(subprocess.signal.SIGINT)
    elif how == "sigkill":
        proc.kill()  # no clean-up code runs: Docker closes the runner's stdin and auto-remove does the rest
    proc.wait(60)
    deadline = time.monotonic() + 60
    while session_containers(docker_client, session) and time.monotonic() < deadline:
        time.sleep(0.5)
    assert session_containers(docker_client, session) == []


def test_gc_removes_leftovers_of_dead_owners(docker_client, sandbox_image):
    dead_pid = subprocess.run(["true"]).returncode or 999_999  # no such process
    container = docker_client.containers.run(
        sandbox_image, ["python3", "-c", "import time; time.sleep(120)"], detach=True, network_mode="none",
        labels={LABEL: "gc-test", OWNER_LABEL: f"{__import__('socket').gethostname()}:{dead_pid}"})
    try:
        result = run_fixbot("sandbox", "gc")
        assert result.returncode == 0, result.stderr
        assert session_containers(docker_client, "gc-test") == []
    finally:
        try:
            container.remove(force=True)
        except Exception:
            pass


def test_missing_image_is_a_clear_error(docker_client):
    from sandbox import ImageMissing
    from sandbox.docker_sandbox import DockerSandbox

    with pytest.raises(ImageMissing, match="fixbot sandbox build --offline"):
        DockerSandbox(image="fixbot-sandbox:does-not-exist", client=docker_client)
    result = run_fixbot("sandbox", "run", "--", "true", env={"FIXBOT_SANDBOX_IMAGE": "fixbot-sandbox:nope"})
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert result.stderr.strip().splitlines()[-1].startswith("fixbot: error: sandbox image fixbot-sandbox:nope")


def test_missing_docker_engine_is_a_clear_error():
    result = run_fixbot("sandbox", "run", "--", "true", env={"DOCKER_HOST": "unix:///nonexistent/docker.sock"})
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert "cannot reach the Docker engine" in result.stderr and "--sandbox local" in result.stderr


@pytest.fixture(scope="module")
def every_base(docker_client) -> None:
    from sandbox.image import PYTHONS, available_pythons

    if available_pythons(docker_client) != tuple(PYTHONS):
        pytest.fail(f"a sandbox base is missing (present: {available_pythons(docker_client)}): run "
                    "`fixbot sandbox build --offline --python all` (or `make setup`)")


@pytest.mark.parametrize("python", ["3.9", "3.11", "3.13"])
def test_dockerfile_build_path(docker_client, every_base, python):
    """The registry path's Dockerfile, built here on each offline base (no registry on this machine)."""
    from sandbox.docker_sandbox import DockerSandbox
    from sandbox.image import ImageSpec, build_from_dockerfile, default_image

    tag = f"fixbot-sandbox-test:dockerfile-py{python}"
    log: list[str] = []
    try:
        spec = ImageSpec(python=python)
        assert build_from_dockerfile(docker_client, spec, log.append, base=default_image(python), tag=tag) == tag
        assert log == [f"building {tag} from the Dockerfile on {default_image(python)}"]
        labels = docker_client.images.get(tag).labels
        assert (labels["fixbot.sandbox.builder"], labels["fixbot.sandbox.python"]) == ("dockerfile", python)
        with DockerSandbox(image=tag, pool_size=1, client=docker_client) as sb:
            version = "import sys, pytest, coverage; print('%d.%d' % sys.version_info[:2])"
            check = sb.run({}, ["python3", "-c", version])
            assert check.ok and check.stdout.strip() == python, check.stderr
    finally:
        docker_client.images.remove(tag, force=True)


def test_offline_image_is_labelled(docker_client, sandbox_image):
    from sandbox.image import DEFAULT_PYTHON

    labels = docker_client.images.get(sandbox_image).labels
    assert labels["fixbot.sandbox.builder"] in ("offline", "dockerfile")
    assert sandbox_image.endswith(labels["fixbot.sandbox.spec"])
    assert labels["fixbot.sandbox.python"] == DEFAULT_PYTHON
    result = run_fixbot("sandbox", "build", "--offline")
    assert result.returncode == 0 and "is present" in result.stderr


def test_cli_builds_and_lists_one_base_per_python(every_base):
    from sandbox.image import DEFAULT_PYTHON, PYTHONS, default_image

    built = run_fixbot("sandbox", "build", "--offline", "--python", "all")
    assert built.returncode == 0 and built.stderr.count("is present") == 3, built.stderr
    info = run_fixbot("sandbox", "info")
    rows = {line.split()[0]: line for line in info.stdout.splitlines()[1:]}
    for python, suite in PYTHONS.items():
        assert rows[python].split()[1:3] == [suite, default_image(python)] and "present" in rows[python]
        assert ("default" in rows[python]) == (python == DEFAULT_PYTHON)
    unknown = run_fixbot("sandbox", "build", "--offline", "--python", "3.10")
    assert unknown.returncode == 2 and "invalid choice" in unknown.stderr and "3.13" in unknown.stderr
    both = run_fixbot("sandbox", "build", "--python", "all", "--base", "python:3.12-slim")
    assert both.returncode == 2 and both.stderr.strip() == (
        "fixbot: error: --base names one image: give it with one --python version, not all")


@pytest.mark.docker  # a fixbot subprocess runs the sandbox
def test_cli_run_passes_exit_codes_and_output():
    ok = run_fixbot("sandbox", "run", "--", "python3", "-c", "print(6 * 7)")
    assert ok.returncode == 0 and ok.stdout == "42\n"
    failed = run_fixbot("sandbox", "run", "--", "sh", "-c", "exit 5")
    assert failed.returncode == 5
    slow = run_fixbot("sandbox", "run", "--timeout", "1", "--", "sleep", "10")
    assert slow.returncode == 124 and "timed out" in slow.stderr


@pytest.mark.docker  # a fixbot subprocess runs the sandbox
def test_cli_run_copies_files(tmp_path):
    test = tmp_path / "test_x.py"
    test.write_text(textwrap.dedent("""
        def test_ok():
            assert 1 + 1 == 2
    """))
    result = run_fixbot("sandbox", "run", "--file", str(test), "--", "python3", "-m", "pytest", "-q", "test_x.py")
    assert result.returncode == 0 and "1 passed" in result.stdout
