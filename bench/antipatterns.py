"""How often the anti-pattern rules (bot/agent/antipatterns.py) fire on fixes that are right: HumanEvalFix's
canonical solutions against its buggy ones, and the developers' own fixes of the real-bug corpus's dev split.
A rule that fires on a right fix refuses a model answer a developer would have written, and ranks such a mutant
last, so every firing is a row for a reader to judge. The holdout split is not read here: its bugs are measured
only inside a whole benchmark run.

    .venv/bin/python bench/antipatterns.py [--data ../shared/data] [--out DIR]

Rows: bench/results/antipatterns-COMMIT.jsonl, one per fix checked (`item`, `source`, `rules`: what fired, as
`path::function: rule` for a real bug); the summary is printed at the end."""
from __future__ import annotations

import argparse
import subprocess
import sys
from collections import Counter
from pathlib import Path

from realbugs_changes import patch_anti_patterns
from realbugs_corpus import Bug, Bundles, load_manifest
from rows import REPO, append_row, code_commit, rows_path, stamp

from eval.tasks import load_tasks

DATA = REPO.parent / "shared" / "data"


def _files(clone: Path, tag: str, paths: tuple[str, ...]) -> dict[str, bytes]:
    found = {}
    for path in paths:
        shown = subprocess.run(["git", "show", f"{tag}:{path}"], cwd=clone, capture_output=True)
        if shown.returncode == 0:
            found[path] = shown.stdout
    return found


def developer_fix(bug: Bug, bundles: Bundles) -> tuple[str, ...]:
    """The rules the developers' fix of `bug` breaks, against its exposing tests as the fix commit has them."""
    clone = bundles.clone(bug.project)
    sources = tuple(p for p in bug.fix_files if p.endswith(".py"))
    tests = _files(clone, bug.fix_tag, bug.test_files)
    return patch_anti_patterns(_files(clone, bug.bug_tag, sources), _files(clone, bug.fix_tag, sources),
                               "\n".join(t.decode(errors="replace") for t in tests.values()))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=DATA, help="the shared data folder (default: %(default)s)")
    parser.add_argument("--out", type=Path, default=Path.home() / ".cache" / "fixbot" / "bench-antipatterns",
                        help="the corpus's clones, and the rows of a run whose code is not committed "
                             "(default: %(default)s)")
    args = parser.parse_args(argv)
    if not (args.data / "realbugs" / "manifest.jsonl").is_file():
        parser.error(f"{args.data}/realbugs/manifest.jsonl not found (--data names the shared data folder)")
    commit = code_commit()
    rows = rows_path("antipatterns", commit, args.out)
    rows.unlink(missing_ok=True)  # a whole run each time: it takes seconds
    head = stamp("antipatterns", commit, None)
    fired: Counter[str] = Counter()
    checked: Counter[str] = Counter()

    def record(item: str, source: str, rules: tuple[str, ...]) -> None:
        append_row(rows, {**head, "item": item, "source": source, "rules": list(rules)})
        fired[source] += bool(rules)
        checked[source] += 1
        if rules:
            print(f"{item}: {'; '.join(rules)}", flush=True)

    for task in load_tasks(args.data / "humanevalpack-python.jsonl"):
        record(task.task_id, "humanevalfix", patch_anti_patterns(
            {"task.py": task.buggy_module.encode()}, {"task.py": task.canonical_module.encode()}, task.test))
    bundles = Bundles(args.data / "realbugs", args.out / "clones")
    for bug in (b for b in load_manifest(args.data / "realbugs") if b.split == "dev"):
        record(bug.id, "realbugs-dev", developer_fix(bug, bundles))
    for source in checked:
        print(f"{source}: {fired[source]} of {checked[source]} right fixes break a rule")
    print(f"rows: {rows}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
