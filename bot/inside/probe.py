"""fixbot's pytest plugin, shipped into the sandbox next to the repository and loaded with `-p fixbot_probe`.

It writes one JSON file ($FIXBOT_PROBE_OUT): the rootdir, every test's outcome by its exact node id, each test's
call duration, the tests that hit the per-test time limit with the project frames they were running; and with
$FIXBOT_COVERAGE=1 `coverage.json` beside it, which tests ran which lines (coverage.py, a context per test as in
pytest-cov; each node id once, then its index), apart because a large suite's coverage can outgrow what the
sandbox brings back. Node ids from here are exact; JUnit XML gives the failure details.

$FIXBOT_TEST_TIMEOUT (seconds): each phase of a test (setup, call, teardown) and each module's import gets a
SIGALRM timer whose handler raises `TestTimeout`, a BaseException (so `except Exception` in the code under test
does not swallow it) that pytest reports as that test's failure with the traceback of where it was. Code that
never returns to Python, or swallows BaseException, is ended by a watchdog thread: it records the test as timed
out, writes the JSON, dumps every thread's stack to stderr and exits the process.

The memory guard (probe_memory.py, shipped beside this file as `fixbot_probe_memory`) does the same for a test
that keeps growing its memory.

With $FIXBOT_VARIANTS, `fixbot_probe_variants` (shipped beside this file, loaded through `pytest_plugins`) runs
several versions of the project's functions in one process: each in a forked child that writes this plugin's
JSON to its own file (`after_fork`).

$FIXBOT_SELECT names a JSON list of node ids: only those run, selected here rather than on the command line
(pytest reports a node id whose module fails to import as "not found", a usage error that would end the run, and
resolves command-line ids against the working directory where the ids are relative to the rootdir). A selected id
that is not collected is recorded as "missing".

Standard library, pytest and coverage only: this file runs inside the sandbox's Python (3.9+), never on the host.
"""
import contextlib
import faulthandler
import json
import os
import re
import signal
import sys
import threading
import time
import traceback
from typing import Any

import fixbot_probe_coverage as per_test
import fixbot_probe_memory as memory
import fixbot_probe_network as network
import fixbot_probe_others as others
import pytest

# variants: idle without $FIXBOT_VARIANTS; others: what other plugins would hide from this one
pytest_plugins = ("fixbot_probe_variants", "fixbot_probe_network", "fixbot_probe_others")
_outcomes: dict[str, str] = {}
_durations: dict[str, float] = {}
_timeouts: set[str] = set()
_memory: set[str] = set()  # the tests (or modules) the memory guard stopped
_stacks: dict[str, list[list[object]]] = {}  # node id -> [[path, line, function, code], ...], outermost first
_state: dict[str, Any] = {"cov": None, "rootdir": None, "limit": 0.0, "running": None, "fired": set(), "select": None,
          "collected": set(), "broken": [], "stderr": None, "old_handler": None, "watchdog": None, "out": None}
SKIP_PARTS = ("tests", "test", "testing")
WORSE = ("failed", "error", "missing")
COLLECT_LIMIT_S = 30.0  # a module's import may take longer than one test (heavy dependencies)
WATCHDOG_POLL_S = 0.25
CONFTEST_FRAME = re.compile(r"^(\S*conftest\.py):\d+:", re.M)  # a traceback entry's location, rootdir-relative


class TestTimeout(BaseException):
    """Raised in the test by the per-test timer."""

    __test__ = False


def _modern(nodeid):
    """pytest before 4 names a class's tests through its instance (`t.py::TestX::()::test_y`) where JUnit XML and
    later pytest say `t.py::TestX::test_y`: one test, one id, whichever pytest the project needs."""
    return nodeid.replace("::()", "")


def _by_modern(ids):
    return {_modern(i): v for i, v in ids.items()}


def _record(nodeid, outcome):
    # "failed"/"error" win over "passed" (a teardown error after a passing call fails the test)
    if _outcomes.get(nodeid) in WORSE and outcome in ("passed", "skipped"):
        return
    _outcomes[nodeid] = outcome


def pytest_configure(config):
    # config.rootpath came with pytest 6.1; Debian bullseye's pytest (6.0.2) has only config.rootdir (a py.path)
    _state["rootdir"] = str(getattr(config, "rootpath", None) or config.rootdir)
    _state["out"] = os.environ.get("FIXBOT_PROBE_OUT")
    _state["cov"] = per_test.start(_state["rootdir"], os.path.dirname(os.path.abspath(__file__)))
    _read_selection(config)
    limit = float(os.environ.get("FIXBOT_TEST_TIMEOUT") or 0)
    if limit > 0 and threading.current_thread() is threading.main_thread():
        _state["limit"] = limit
        # a copy of the real stderr: while a test runs, pytest's capture owns fd 2
        _state["stderr"] = os.dup(2)
        _start_watchdog()
    memory.start(_on_memory_stop)
    network.start()
    network._on_service.append(_absent_service)


def _start_watchdog():
    stop = threading.Event()
    thread = threading.Thread(target=_watch, args=(stop,), name="fixbot-watchdog", daemon=True)
    thread.start()
    _state["watchdog"] = stop


def after_fork(out):
    """In a variant's child (fixbot_probe_variants): this plugin's JSON goes to `out`, and the guards' threads,
    which a fork does not copy, start again (the timer is per process: each phase arms its own)."""
    _state["out"] = out
    if _state["watchdog"] is not None:
        _start_watchdog()
    memory.after_fork()


def _read_selection(config):
    """The selected ids' files replace the command's paths; the rootdir stays the one the command gave, so the
    ids (relative to it) match."""
    name = os.environ.get("FIXBOT_SELECT")
    if not name:
        return
    with open(name, encoding="utf-8") as f:
        selected = [str(i) for i in json.load(f)]
    _state["select"] = set(selected)
    paths = dict.fromkeys(os.path.normpath(os.path.join(_state["rootdir"], i.split("::", 1)[0])) for i in selected)
    config.args[:] = [path for path in paths if os.path.exists(path)]


# --- the per-test timer -------------------------------------------------------------------------------------

def _arm(nodeid, limit):
    if not _state["limit"] or _state["running"] is not None:
        return False
    _state["running"] = (nodeid, time.monotonic(), limit)
    # installed at each arming: another plugin (pytest-timeout's signal method) may have taken SIGALRM meanwhile
    _state["old_handler"] = signal.signal(signal.SIGALRM, _on_alarm)
    signal.setitimer(signal.ITIMER_REAL, limit)
    return True


SERVICE_GRACE_S = 5.0  # what a test keeps of its time limit once it tried a service nothing runs


def _absent_service(nodeid):
    """A test that tried a port nothing listens on waits for a server that will not come: its time limit is cut
    to a few more seconds (probe_network.py)."""
    running = _state["running"]
    if running is None or running[0] != nodeid:
        return
    left = running[1] + running[2] - time.monotonic()
    if left > SERVICE_GRACE_S:
        _state["running"] = (nodeid, running[1], time.monotonic() - running[1] + SERVICE_GRACE_S)
        signal.setitimer(signal.ITIMER_REAL, SERVICE_GRACE_S)


def _disarm():
    if _state["running"] is not None:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, _state["old_handler"] or signal.SIG_DFL)
    _state["running"] = None


def _on_alarm(signum, frame):
    __tracebackhide__ = True
    running = _state["running"]
    if running is None:
        return
    nodeid, _, limit = running
    _state["fired"].add(nodeid)
    _stacks[nodeid] = _project_stack(frame)
    what = "the test" if "::" in nodeid else "importing the module"
    raise TestTimeout("fixbot: %s timed out after %g s (the traceback shows where it was running)" % (what, limit))


def _project_stack(frame):
    """The frames of the project's own code (under the rootdir, not fixbot's or an installed package's)."""
    here = os.path.dirname(os.path.abspath(__file__))
    root = _state["rootdir"] + os.sep
    frames = []
    for entry in traceback.extract_stack(frame):
        path = os.path.abspath(entry.filename)
        outside = not path.startswith(root) or path.startswith(here + os.sep) or "-packages" + os.sep in path
        if entry.filename.startswith("<") or outside:
            continue
        frames.append([os.path.relpath(path, _state["rootdir"]).replace(os.sep, "/"), entry.lineno, entry.name,
                       (entry.line or "").strip()])
    return frames


@contextlib.contextmanager
def _guarded(nodeid, limit):
    """One phase under both guards: the time limit and the memory guard."""
    timed = _arm(nodeid, limit)
    watched = memory.watch(nodeid)
    try:
        yield
    finally:
        if watched:
            memory.unwatch()
        if timed:
            _disarm()


@pytest.hookimpl(hookwrapper=True, trylast=True)
def pytest_runtest_setup(item):
    with _guarded(item.nodeid, _state["limit"]):
        yield


@pytest.hookimpl(hookwrapper=True, trylast=True)
def pytest_runtest_call(item):
    with _guarded(item.nodeid, _state["limit"]):
        yield


@pytest.hookimpl(hookwrapper=True, trylast=True)
def pytest_runtest_teardown(item, nextitem):
    with _guarded(item.nodeid, _state["limit"]):
        yield


@pytest.hookimpl(hookwrapper=True, trylast=True)
def pytest_make_collect_report(collector):
    # a module's code runs at import: a loop there (a module-level table built by a loop) hangs collection
    if not isinstance(collector, pytest.Module):
        yield
        return
    with _guarded(collector.nodeid, max(3 * _state["limit"], COLLECT_LIMIT_S)):
        yield


def _watch(stop):
    """The backstop for code the timer's exception cannot stop: past twice the limit and a few seconds more,
    give up on the process (the host reads what was written)."""
    while not stop.wait(WATCHDOG_POLL_S):
        running = _state["running"]
        if running is not None and time.monotonic() - running[1] > 2 * running[2] + 5:
            _give_up(*running)


def _give_up(nodeid, started, limit):
    main = sys._current_frames().get(threading.main_thread().ident)
    _record(nodeid, "failed")
    _timeouts.add(nodeid)
    _durations[nodeid] = round(time.monotonic() - started, 4)
    if main is not None:
        _stacks[nodeid] = _project_stack(main)
    threading.Timer(10.0, os._exit, (1,)).start()  # whatever below hangs, the process ends
    _write(with_coverage=False)
    err = _state["stderr"]
    os.write(err, ("\nfixbot: %s did not stop %.1f s after its time limit of %g s (it ignores the timeout "
                   "exception or runs in C code); the run ends here. Stacks:\n"
                   % (nodeid, time.monotonic() - started - limit, limit)).encode())
    faulthandler.dump_traceback(file=err, all_threads=True)
    try:
        _write(with_coverage=True)
    finally:
        os._exit(1)


def _on_memory_stop(nodeid, frame):
    _stacks[nodeid] = _project_stack(frame)


# --- selection and outcomes ---------------------------------------------------------------------------------

def pytest_itemcollected(item):
    _state["collected"].add(_modern(item.nodeid))


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(session, config, items):
    selected = _state["select"]
    if selected is None:
        return
    modules = tuple(i + "::" for i in selected if "::" not in i)  # a module that failed to collect before
    kept = [it for it in items if _modern(it.nodeid) in selected or it.nodeid.startswith(modules)]
    if len(kept) < len(items):
        keep = set(id(it) for it in kept)
        config.hook.pytest_deselected(items=[it for it in items if id(it) not in keep])
        items[:] = kept
    modules_now = {c.split("::", 1)[0] for c in _state["collected"]}
    loaded = _loaded_conftests(config)
    for nodeid in sorted(selected):
        if nodeid in _state["collected"] or nodeid in modules_now or nodeid in _outcomes:
            continue
        if nodeid in loaded:  # a conftest that did not load before (the project's code it imports raised)
            _record(nodeid, "passed")
            continue
        broken = any(nodeid.startswith(b + "::") or nodeid.startswith(b + "/") for b in _state["broken"])
        _record(nodeid, "error" if broken else "missing")  # its module's collection error says why


def _loaded_conftests(config):
    """The conftest files pytest has imported, as paths relative to the rootdir."""
    files = (getattr(plugin, "__file__", None) for plugin in config.pluginmanager.get_plugins())
    return {os.path.relpath(f, _state["rootdir"]).replace(os.sep, "/") for f in files
            if f and os.path.basename(f) == "conftest.py"}


def pytest_sessionfinish(session, exitstatus):
    if any(o == "missing" for o in _outcomes.values()) and session.exitstatus in (0, 5):
        session.exitstatus = 1  # a selected test that is gone is a failure, not an empty run
    _state["exitstatus"] = int(session.exitstatus)


def pytest_terminal_summary(terminalreporter):
    missing = sorted(i for i, o in _outcomes.items() if o == "missing")
    if missing:
        terminalreporter.write_line("fixbot: %d selected test(s) were not collected: %s"
                                    % (len(missing), ", ".join(missing)))


def pytest_runtest_protocol(item, nextitem):
    cov = _state["cov"]
    if cov is not None:
        cov.switch_context(_modern(item.nodeid))


def pytest_runtest_logreport(report):
    if report.failed:
        _record(report.nodeid, "failed" if report.when == "call" else "error")
        _note_stopped(report.nodeid)
    elif report.skipped:
        _record(report.nodeid, "skipped")
    elif report.when == "call":
        _record(report.nodeid, "passed")
    if report.when == "call":
        _durations[report.nodeid] = round(report.duration, 4)


def _failed_conftest(report):
    """The conftest whose import failed while a directory (or, before pytest 8, the whole session) was collected,
    as its path: a test id that selects it again, where the directory's or the session's id would not."""
    if report.nodeid.endswith(".py") or "::" in report.nodeid:
        return None
    match = CONFTEST_FRAME.search(str(report.longrepr))
    return match.group(1) if match else None


@pytest.hookimpl(tryfirst=True)  # the node id it may set is the one JUnit XML and the terminal then report
def pytest_collectreport(report):
    if report.failed:
        report.nodeid = _failed_conftest(report) or report.nodeid
        _record(report.nodeid or "<collection>", "error")
        _state["broken"].append(report.nodeid)
        _note_stopped(report.nodeid)


def _note_stopped(nodeid):
    """A failed test (or module) that a guard stopped."""
    if nodeid in _state["fired"]:
        _timeouts.add(nodeid)
    if nodeid in memory.fired():
        _memory.add(nodeid)


def _write(with_coverage):
    out = _state["out"]
    if not out:
        return
    payload = {"rootdir": _state["rootdir"], "outcomes": _by_modern(_outcomes), "durations": _by_modern(_durations),
               "timeouts": sorted(map(_modern, _timeouts)), "stacks": _by_modern(_stacks),
               "test_timeout": _state["limit"], "memory": sorted(map(_modern, _memory)),
               "memory_limit_mb": memory.threshold_mb(), "network": _by_modern(network.attempts()),
               "programs": _by_modern(network.missing_programs()), "services": _by_modern(network.services())}
    _dump(payload, out)
    if with_coverage and _state["cov"] is not None:
        _dump(per_test.lines(_state["cov"], _state["rootdir"], SKIP_PARTS),
              os.path.join(os.path.dirname(out), "coverage.json"))


def _dump(payload, path):
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(payload, f, separators=(",", ":"))
    os.replace(tmp, path)  # the watchdog may write while the main thread ends: never a half-written file


@pytest.hookimpl(trylast=True)
def pytest_unconfigure(config):
    memory.stop()
    if _state["watchdog"] is not None:
        _state["watchdog"].set()
        _disarm()
    _write(with_coverage=True)
    others.leave_lingerers(_state.get("exitstatus", 1))
