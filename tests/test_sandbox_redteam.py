"""Hostile programs in the real Docker sandbox: each is contained, the host is unaffected, and no container
is left behind (the module's sandbox fixture asserts that on close)."""
from __future__ import annotations

import json
import os
import socket
import textwrap
import threading

import psutil
import pytest

from sandbox import Job

pytestmark = pytest.mark.timeout(180)


def py(source: str) -> dict[str, str]:
    return {"main.py": textwrap.dedent(source)}


def still_serves(sb) -> None:
    result = sb.run(py("print('alive')"), ["python3", "main.py"], timeout=20)
    assert result.ok and result.stdout == "alive\n", result


def leftover_processes(sb) -> list[str]:
    """Processes in a warm container besides the runner (pid 1) and this probe itself."""
    probe = py("""
        import os
        me = os.getpid()
        for pid in os.listdir('/proc'):
            if pid.isdigit() and int(pid) not in (1, me):
                print(pid, open(f'/proc/{pid}/cmdline', 'rb').read().replace(b'\\0', b' ').decode())
    """)
    results = sb.run_batch([Job(probe, ["python3", "main.py"], 20)] * sb.pool_size)
    return [line for r in results for line in r.stdout.splitlines()]


def test_infinite_loop_times_out(docker_sandbox):
    result = docker_sandbox.run(py("while True:\n    pass\n"), ["python3", "main.py"], timeout=2)
    assert result.timed_out and result.exit_code == -9
    assert 1.9 < result.duration_s < 6
    still_serves(docker_sandbox)


def test_fork_bomb_hits_pids_limit(docker_sandbox):
    host_procs = len(psutil.pids())
    result = docker_sandbox.run(py("""
        import os, time
        while True:
            try:
                os.fork()
            except OSError as exc:
                print('fork refused:', exc, flush=True)
                time.sleep(30)
    """), ["python3", "main.py"], timeout=6)
    assert result.timed_out
    assert "Resource temporarily unavailable" in result.stdout
    assert len(psutil.pids()) < host_procs + 50, "the bomb's processes must not reach the host's process table"
    assert leftover_processes(docker_sandbox) == []
    still_serves(docker_sandbox)


def test_memory_bomb_is_oom_killed(docker_sandbox):
    result = docker_sandbox.run(py("""
        hog = []
        while True:
            hog.append(b'x' * (64 * 1024 * 1024))
    """), ["python3", "main.py"], timeout=60)
    assert result.oom_killed and result.exit_code == -9 and not result.timed_out, result
    still_serves(docker_sandbox)


def test_network_is_unreachable(docker_sandbox):
    # A listener on the host's loopback: the sandbox must not reach it. No packet leaves this machine:
    # the UDP connect below only asks the kernel for a route, and there is none.
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    port = server.getsockname()[1]
    accepted = []
    threading.Thread(target=lambda: accepted.append(server.accept()), daemon=True).start()
    try:
        result = docker_sandbox.run(py(f"""
            import os, socket
            print('interfaces', sorted(os.listdir('/sys/class/net')))
            for attempt in ('tcp-host-loopback', 'udp-route'):
                try:
                    if attempt == 'tcp-host-loopback':
                        socket.create_connection(('127.0.0.1', {port}), timeout=3)
                    else:
                        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.connect(('192.0.2.1', 9))
                    print(attempt, 'CONNECTED')
                except OSError as exc:
                    print(attempt, 'failed', exc.errno)
        """), ["python3", "main.py"], timeout=20)
    finally:
        server.close()
    assert "interfaces ['lo']" in result.stdout
    assert "CONNECTED" not in result.stdout and result.stdout.count("failed") == 2, result.stdout
    assert accepted == []


def test_writes_outside_the_work_dir_fail_and_nothing_persists(docker_sandbox):
    result = docker_sandbox.run(py("""
        import os
        for path in ('/etc/fixbot', '/usr/fixbot', '/fixbot', '/tmp/fixbot', '/root/fixbot', '/var/tmp/fixbot',
                     '/home/fixbot'):
            try:
                open(path, 'w').write('x')
                print('WROTE', path)
            except OSError as exc:
                print('refused', path, exc.strerror)
        # /work (the tmpfs above the run's dir) and /dev/shm are writable: they must be wiped after the run.
        open('/work/conftest.py', 'w').write('raise SystemExit(3)')
        open('/dev/shm/planted', 'w').write('x')
        print('inside ok')
    """), ["python3", "main.py"], timeout=20)
    assert "WROTE" not in result.stdout, result.stdout
    assert result.stdout.count("refused") == 7 and "inside ok" in result.stdout
    later = docker_sandbox.run_batch([Job(py("""
        import json, os
        print(json.dumps({'work': os.listdir('/work'), 'shm': os.listdir('/dev/shm'),
                          'mine': os.getcwd().split('/')[2]}))
    """), ["python3", "main.py"], 20)] * docker_sandbox.pool_size)
    for r in later:
        seen = json.loads(r.stdout)
        assert seen["work"] == [seen["mine"]] and seen["shm"] == [], seen


def test_host_secret_is_absent(docker_client, sandbox_image, monkeypatch):
    from sandbox.docker_sandbox import DockerSandbox

    monkeypatch.setenv("FIXBOT_TEST_SECRET", "hunter2-do-not-leak")
    with DockerSandbox(image=sandbox_image, pool_size=1, client=docker_client) as sb:
        result = sb.run(py("""
            import os, glob
            print(sorted(os.environ.items()))
            for path in glob.glob('/proc/*/environ'):
                try:
                    print(open(path, 'rb').read())
                except OSError:
                    pass
        """), ["python3", "main.py"], timeout=20)
    assert result.ok
    assert "hunter2" not in result.stdout and "FIXBOT_TEST_SECRET" not in result.stdout


def test_background_children_die_with_the_run(docker_sandbox):
    result = docker_sandbox.run(py("""
        import os, subprocess
        subprocess.Popen(['sleep', '300'])                      # same process group
        if os.fork() == 0:                                      # a daemon that leaves the group
            os.setsid()
            if os.fork() == 0:
                import time; time.sleep(300)
            os._exit(0)
        print('spawned')
    """), ["python3", "main.py"], timeout=20)
    assert result.ok and "spawned" in result.stdout
    assert leftover_processes(docker_sandbox) == []


def test_flood_of_output_is_truncated_and_host_memory_flat(docker_sandbox):
    me = psutil.Process(os.getpid())
    rss_before = me.memory_info().rss
    result = docker_sandbox.run(py("""
        import sys
        block = b'y' * (1024 * 1024)
        for _ in range(100):
            sys.stdout.buffer.write(block)
        sys.stdout.flush()
        print('tail marker')
    """), ["python3", "main.py"], timeout=60)
    assert result.ok and result.truncated
    assert len(result.stdout) < 70 * 1024
    assert "bytes of output dropped" in result.stdout and result.stdout.endswith("tail marker\n")
    assert me.memory_info().rss - rss_before < 32 * 1024 * 1024


def test_job_cannot_kill_the_runner_or_forge_its_answer(docker_sandbox):
    result = docker_sandbox.run(py("""
        import os, signal
        for attempt in ('kill', 'forge'):
            try:
                if attempt == 'kill':
                    os.kill(1, signal.SIGKILL)
                else:
                    open('/proc/1/fd/1', 'w').write('{"results": []}\\n')
                print(attempt, 'done')
            except OSError as exc:
                print(attempt, 'refused', exc.strerror)
    """), ["python3", "main.py"], timeout=20)
    assert "forge refused" in result.stdout, result
    still_serves(docker_sandbox)
