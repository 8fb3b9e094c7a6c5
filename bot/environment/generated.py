"""The Python modules a build wrote into the project's tree and the checkout lacks (setuptools-scm's `write_to`
version module, a generated parser), which the tests import: the tests run from the checkout, so they are kept
with the image and added to every run's files.

In: the build container after the install plan ran, with KNOWN_FILE (the checkout's paths) in its tree. Out:
{path: text} of at most MAX_GENERATED small modules. Never: a whole build tree written in place, a file the
checkout has, or anything but `.py` files."""
from __future__ import annotations

import json
from collections.abc import Callable

from bot.environment.install.plan import BUILD_DIR
from sandbox.builder import SRC, BuildBox

# run in the build container after the plan
GENERATED_SCRIPT = """
import json, os, sys
known = set(json.load(open(sys.argv[1])))
found = {}
for top, dirs, files in os.walk("SRC"):
    dirs[:] = [d for d in dirs if d not in ("build", "dist", ".eggs", ".git", "__pycache__", "BUILD")
               and not d.endswith(".egg-info")]
    for name in files:
        path = os.path.join(top, name)
        rel = os.path.relpath(path, "SRC")
        if name.endswith(".py") and rel not in known and os.path.getsize(path) <= 65536:
            found[rel] = open(path, encoding="utf-8", errors="replace").read()
print("FIXBOT-GENERATED " + json.dumps(found))
""".replace("SRC", SRC).replace("BUILD", BUILD_DIR)
KNOWN_FILE = f"{BUILD_DIR}/fixbot-known.json"
MAX_GENERATED = 20


def generated_modules(box: BuildBox, log: Callable[[str], None]) -> dict[str, str]:
    result = box.run(("python3", "-c", GENERATED_SCRIPT, f"{SRC}/{KNOWN_FILE}"), timeout_s=120, echo=False)
    if not result.ok or "FIXBOT-GENERATED " not in result.output:
        return {}
    found = json.loads(result.output.rpartition("FIXBOT-GENERATED ")[2].splitlines()[0])
    if not found or len(found) > MAX_GENERATED:  # a whole build tree written in place: not what the tests need
        return {}
    log(f"environment: the build wrote {', '.join(sorted(found))}, which the checkout lacks: kept for the tests")
    return found
