"""fixbot's per-test coverage inside the sandbox (the probe plugin's part; bot/inside/probe.py): coverage.py started
with a context per test, and read back as which tests ran which lines.

coverage.py comes from fixbot's tools directory when the environment put one there (the project pins a coverage.py
older than per-test contexts need: bot/environment/build.py), else from the environment. When it cannot start, the run
goes on without it and says so: the ranking then reads tracebacks only.

Standard library and coverage only: this file runs inside the sandbox's Python (3.9+), never on the host."""
import os
import sys

TOOLS_DIR = "/opt/fixbot-tools"


def _import_own():
    """fixbot's own coverage.py, imported as this module is (a `-p` plugin's import, before the installed plugins'
    entry points): an old pytest-cov that imports coverage at its load then finds fixbot's, not the pinned one."""
    if not os.path.isdir(TOOLS_DIR) or "coverage" in sys.modules:
        return
    sys.path.insert(0, TOOLS_DIR)
    try:
        import coverage  # noqa: F401
    except Exception:  # a broken copy: start() says so when coverage is wanted
        pass
    finally:
        sys.path.remove(TOOLS_DIR)


_import_own()


def start(rootdir, here):
    """A started coverage.Coverage measuring `rootdir` (not `here`, the probe's own directory), or None."""
    if os.environ.get("FIXBOT_COVERAGE") != "1":
        return None
    try:
        coverage = _own_coverage()
        cov = coverage.Coverage(data_file=os.path.join(here, ".coverage"), config_file=False, source=[rootdir],
                                omit=[os.path.join(here, "*")])
        cov.start()
    except Exception as exc:  # the project's environment broke the instrument: the run goes on without it
        sys.stderr.write("fixbot: per-test coverage is unavailable here (%s: %s); ranking by tracebacks only\n"
                         % (type(exc).__name__, exc))
        return None
    return cov


def _own_coverage():
    import coverage

    if tuple(coverage.version_info[:1]) < (5,):
        raise ImportError("coverage %s is older than 5.0, which per-test contexts need" % coverage.__version__)
    return coverage


def lines(cov, rootdir, skip_parts):
    """{"tests": [node id, ...], "files": {path: {line: [index into tests, ...]}}}"""
    cov.stop()
    data = cov.get_data()
    found = {}
    index = {}
    for path in data.measured_files():
        rel = os.path.relpath(path, rootdir)
        if rel.startswith("..") or any(part in skip_parts for part in rel.split(os.sep)[:-1]):
            continue
        by_line = {}
        for line, contexts in data.contexts_by_lineno(path).items():
            tests = sorted(c for c in contexts if c)
            if tests:
                by_line[str(line)] = [index.setdefault(test, len(index)) for test in tests]
        if by_line:
            found[rel.replace(os.sep, "/")] = by_line
    return {"tests": list(index), "files": found}
