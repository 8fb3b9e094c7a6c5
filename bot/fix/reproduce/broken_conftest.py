"""A conftest that does not load: pytest stops with a usage error before any test ("ImportError while loading
conftest '.../tests/conftest.py'"). When the code that raised is the project's own, imported by the conftest (a
syntax error, a bad name at module level), that is the failure to repair, and it goes by the conftest's path as its
test id. When it is the conftest itself, another test file or an installed package (a conftest written for an older
pytest), the project's test set-up is what is wrong: the user's to fix, told how."""
from __future__ import annotations

import re
from dataclasses import dataclass

from bot.checkout.paths import is_test_path
from bot.failures import Failure
from bot.failures.pytest_output import parse_conftest_error

# The runner's work dir (/work/run-XXXX/<job index>) is the root the traceback's paths are relative to.
_RUN_ROOT = re.compile(r"ImportError while loading conftest '(?P<root>[^']*?/run-[^/']+/\d+)/")


@dataclass(frozen=True, kw_only=True)
class BrokenConftest:
    path: str  # "tests/conftest.py", relative to the run's root
    failure: Failure  # test_id is `path`; its traceback ends where the error was raised
    in_project: bool  # raised in the project's code, which a repair may change
    report: str  # pytest's lines about it, after "ImportError while loading conftest"

    def refusal(self) -> str:
        """Exit 2's one line when the error is not the project's code to repair."""
        tail = " | ".join([line for line in self.report.splitlines() if line.strip()][-4:]) or "no output"
        return (f"the project's {self.path} does not load, so pytest runs no test: {tail} -- when it fails inside "
                "an installed package, the project may need an older release of it: `fixbot env PATH` lists what "
                "is installed; pin a version with --setup or `setup:` in .github/fixbot.yml (docs/environment.md)")


def broken_conftest(output: str) -> BrokenConftest | None:
    """The conftest pytest could not load, if that is why it stopped (with a usage error)."""
    root = _RUN_ROOT.search(output)
    failure = parse_conftest_error(output, root["root"] if root else None)
    if failure is None:
        return None
    project = [frame.path for frame in failure.traceback if not frame.path.startswith(("/", "<"))]
    raised_in = project[-1] if project else None  # the innermost frame in the checkout
    report = output.partition("ImportError while loading conftest")[2].partition("\n")[2]
    return BrokenConftest(path=failure.test_id, failure=failure, report=report,
                          in_project=raised_in is not None and not is_test_path(raised_in))
