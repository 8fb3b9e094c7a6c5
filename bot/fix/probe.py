"""fixbot's pytest plugin, shipped into the sandbox next to the repository and loaded with `-p fixbot_probe`.

It writes one JSON file ($FIXBOT_PROBE_OUT): the rootdir, every test's outcome by its exact node id, and, when
$FIXBOT_COVERAGE=1, which tests executed which lines (coverage.py with one context per test, the way pytest-cov
does it). Node ids from here are exact; JUnit XML gives the failure details. Standard library, pytest and
coverage only: this file runs inside the sandbox image, never on the host.
"""
import json
import os

_outcomes = {}
_state = {"cov": None, "rootdir": None}
SKIP_PARTS = ("tests", "test", "testing")


def _record(nodeid, outcome):
    # "failed"/"error" win over "passed" (a teardown error after a passing call fails the test)
    if _outcomes.get(nodeid) in ("failed", "error") and outcome in ("passed", "skipped"):
        return
    _outcomes[nodeid] = outcome


def pytest_configure(config):
    _state["rootdir"] = str(config.rootpath)
    if os.environ.get("FIXBOT_COVERAGE") == "1":
        import coverage

        here = os.path.dirname(os.path.abspath(__file__))
        cov = coverage.Coverage(data_file=os.path.join(here, ".coverage"), config_file=False,
                                source=[_state["rootdir"]], omit=[os.path.join(here, "*")])
        cov.start()
        _state["cov"] = cov


def pytest_runtest_protocol(item, nextitem):
    cov = _state["cov"]
    if cov is not None:
        cov.switch_context(item.nodeid)


def pytest_runtest_logreport(report):
    if report.failed:
        _record(report.nodeid, "failed" if report.when == "call" else "error")
    elif report.skipped:
        _record(report.nodeid, "skipped")
    elif report.when == "call":
        _record(report.nodeid, "passed")


def pytest_collectreport(report):
    if report.failed:
        _record(report.nodeid or "<collection>", "error")


def _coverage(cov, rootdir):
    cov.stop()
    data = cov.get_data()
    lines = {}
    for path in data.measured_files():
        rel = os.path.relpath(path, rootdir)
        if rel.startswith("..") or any(part in SKIP_PARTS for part in rel.split(os.sep)[:-1]):
            continue
        by_line = {}
        for line, contexts in data.contexts_by_lineno(path).items():
            tests = sorted(c for c in contexts if c)
            if tests:
                by_line[str(line)] = tests
        if by_line:
            lines[rel.replace(os.sep, "/")] = by_line
    return lines


def pytest_unconfigure(config):
    out = os.environ.get("FIXBOT_PROBE_OUT")
    if not out:
        return
    payload = {"rootdir": _state["rootdir"], "outcomes": _outcomes}
    if _state["cov"] is not None:
        payload["coverage"] = _coverage(_state["cov"], _state["rootdir"])
    with open(out, "w", encoding="utf-8") as f:
        json.dump(payload, f)
