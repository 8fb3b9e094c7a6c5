"""The network watch of fixbot's pytest plugin (probe.py), shipped beside it as `fixbot_probe_network`.

The sandbox runs tests with no network. A test that needs it (a request to httpbin.org) fails there whatever the
code does, so it is not a failure to repair. An audit hook (PEP 578) sees every name lookup and connection and
records, per test (or per module while it is collected), the hosts that were not this machine. The same hook sees
every subprocess a test starts, and records the programs the sandbox does not have (`git`, `ffmpeg`): a test that
fails after running one is the sandbox's lack, not the code's bug. And a connection to a port of this machine that
nothing listens on (read from /proc/net/tcp, never by connecting) is a service the test expects and the sandbox does
not run (a database, an emulator): it is recorded the same way, and the probe gives such a test only a few more
seconds (a client that retries an absent server would otherwise use the whole time limit).

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
_services: dict = {}  # node id -> set of "localhost:PORT" that nothing listened on
_on_service: list = []  # the probe's callback: called with the node id when it first tried an absent service


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
        elif current is not None and event == "socket.connect" and host is not None:
            _local_connect(current, args[1])
    except Exception:
        pass


def _local_connect(current, address):
    port = address[1] if isinstance(address, tuple) and len(address) > 1 and isinstance(address[1], int) else None
    if port is None or _listening(port):
        return
    first = current not in _services
    _services.setdefault(current, set()).add("localhost:%d" % port)
    if first:
        for callback in _on_service:
            callback(current)


def _listening(port):
    """Something on this machine listens on TCP `port` (a socket in state LISTEN, 0A, in /proc/net/tcp or tcp6)."""
    wanted = ":%04X" % port
    for name in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(name, encoding="ascii") as table:
                for line in table.readlines()[1:]:
                    fields = line.split()
                    if len(fields) > 3 and fields[1].endswith(wanted) and fields[3] == "0A":
                        return True
        except OSError:
            return True  # no table to read: assume it listens, change nothing
    return False


def start():
    if not _state["hooked"]:  # an audit hook cannot be removed: one per process
        sys.addaudithook(_audit)
        _state["hooked"] = True


def attempts():
    """{node id: sorted hosts} of the tests (and modules) that tried to reach another machine."""
    return {nodeid: sorted(hosts) for nodeid, hosts in _attempts.items()}


def services():
    """{node id: sorted "localhost:PORT"} of the tests that tried a port of this machine nothing listened on."""
    return {nodeid: sorted(found) for nodeid, found in _services.items()}


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
