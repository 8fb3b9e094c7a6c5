"""The network watch of fixbot's pytest plugin (probe.py), shipped beside it as `fixbot_probe_network`.

The sandbox runs tests with no network. A test that needs it (a request to httpbin.org) fails there whatever the
code does, so it is not a failure to repair. An audit hook (PEP 578) sees every name lookup and connection and
records, per test (or per module while it is collected), the hosts that were not this machine. The same hook sees
every subprocess a test starts, and records the programs the sandbox does not have (`git`, `ffmpeg`): a test that
fails after running one is the sandbox's lack, not the code's bug.

Standard library and pytest only: this file runs inside the sandbox's Python (3.9+), never on the host.

PYTEST_DONT_REWRITE: probe.py imports this module before pytest loads it as a plugin, and pytest's warning that it
cannot rewrite an imported module is an error in a project with `filterwarnings = error`: no test would run.
"""
import os
import shutil
import sys

LOCAL = {"", "localhost", "localhost.localdomain", "ip6-localhost", "ip6-loopback", "::1", "::", "0.0.0.0"}
EVENTS = frozenset(("socket.getaddrinfo", "socket.gethostbyname", "socket.gethostbyname_ex", "socket.connect"))
_state = {"current": None, "hooked": False}
_attempts: dict = {}  # node id -> set of hosts
_programs: dict = {}  # node id -> set of programs not found


def _host(event, args):
    if event == "socket.connect":
        address = args[1]
        return address[0] if isinstance(address, tuple) and address else None
    return args[0] if args else None


def _is_local(host):
    if isinstance(host, (bytes, bytearray)):
        host = bytes(host).decode("ascii", "replace")
    if not isinstance(host, str):
        return True  # a Unix socket, a number: not a host name
    host = host.lower().strip("[]")
    return host in LOCAL or host.startswith("127.") or host.endswith(".localhost")


def _missing_program(args):
    """The program of a `subprocess.Popen` event (executable, args, cwd, env) when the sandbox does not have it."""
    executable, _, cwd, env = args
    name = os.fsdecode(executable)
    if os.sep in name:
        return None if os.path.exists(os.path.join(os.fsdecode(cwd or "."), name)) else name
    path = env.get("PATH") if isinstance(env, dict) else None
    return None if shutil.which(name, path=path if path is not None else os.environ.get("PATH", os.defpath)) else name


def _audit(event, args):
    # Called for every audited event in the process: cheap first test, and never raise (it would be the caller's).
    if event == "subprocess.Popen":
        try:
            current, program = _state["current"], _missing_program(args)
            if current is not None and program:
                _programs.setdefault(current, set()).add(program)
        except Exception:
            pass
        return
    if event not in EVENTS:
        return
    try:
        current = _state["current"]
        host = _host(event, args)
        if current is not None and host is not None and not _is_local(host):
            _attempts.setdefault(current, set()).add(str(host))
    except Exception:
        pass


def start():
    if not _state["hooked"]:  # an audit hook cannot be removed: one per process
        sys.addaudithook(_audit)
        _state["hooked"] = True


def attempts():
    """{node id: sorted hosts} of the tests (and modules) that tried to reach another machine."""
    return {nodeid: sorted(hosts) for nodeid, hosts in _attempts.items()}


def missing_programs():
    """{node id: sorted programs} of the tests (and modules) that ran a program the sandbox does not have."""
    return {nodeid: sorted(programs) for nodeid, programs in _programs.items()}


def pytest_collectstart(collector):
    _state["current"] = collector.nodeid or None


def pytest_collectreport(report):
    _state["current"] = None


def pytest_runtest_logstart(nodeid, location):
    _state["current"] = nodeid


def pytest_runtest_logfinish(nodeid, location):
    _state["current"] = None
