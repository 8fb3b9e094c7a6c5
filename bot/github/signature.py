"""A failure's identity, so that one failure gets one pull request however many red runs report it.

The signature hashes what stays the same from one red run to the next (the failing test ids and the functions
fixbot repaired), not the commit: a second push that leaves the same test red finds the open PR instead of
opening another. It travels in the branch name and, because a branch can be renamed, also in a hidden marker in
the PR body."""
from __future__ import annotations

import hashlib
import re

from bot.fix.result import FixResult

BRANCH_PREFIX = "fixbot/"
_LENGTH = 12  # hex digits: 48 bits, no accidental collision among one repository's failures
_MARKER = re.compile(r"<!--\s*fixbot:signature=([0-9a-f]{%d})\s*-->" % _LENGTH)


def signature(result: FixResult) -> str:
    # the tests the fix is for: a test that fails only in the sandbox (the network) is not this failure's identity
    tests = result.tests_fixed_for
    repaired = [r.target for r in result.repairs if r.status == "fixed"] or [r.target for r in result.repairs]
    targets = sorted({f"{t.path}::{t.qualname}" for t in (repaired or result.targets)})
    text = "fixbot-signature-v1\n" + "\n".join(tests) + "\n--\n" + "\n".join(targets)
    return hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest()[:_LENGTH]


def marker(sig: str) -> str:
    return f"<!-- fixbot:signature={sig} -->"


def branch_name(head_sha: str, sig: str) -> str:
    """`fixbot/<short head sha>-<signature>`: readable, unique per commit and failure, and recognisable."""
    return f"{BRANCH_PREFIX}{head_sha[:7]}-{sig}"


def carries(sig: str, *, head_ref: str | None, body: str | None) -> bool:
    """Whether an open PR is fixbot's PR for this failure: by its branch name, or by the marker in its body."""
    if head_ref and head_ref.startswith(BRANCH_PREFIX) and head_ref.endswith(f"-{sig}"):
        return True
    return bool(body) and sig in _MARKER.findall(body or "")
