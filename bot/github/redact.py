"""Keeps GitHub credentials out of everything fixbot prints, logs, raises or publishes."""
from __future__ import annotations

import re
from collections.abc import Iterable

MASK = "***"

# GitHub's token formats: classic PATs (ghp_), OAuth (gho_), user-to-server (ghu_), installation and
# GITHUB_TOKEN (ghs_), refresh (ghr_) and fine-grained PATs (github_pat_). Matching the shapes catches a token we
# were never handed, e.g. one a test printed into the log we are about to quote in a PR body.
_TOKEN_SHAPES = re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,})")
# Shorter secrets match everywhere (a test token, a value with no known shape) but a one- or two-character
# "secret" would blank out half the text, so those are ignored rather than trusted.
_MIN_SECRET = 4


def redact(text: str, secrets: Iterable[str] = ()) -> str:
    """`text` with each of `secrets` and anything shaped like a GitHub token replaced by `***`."""
    for secret in sorted({s for s in secrets if s and len(s) >= _MIN_SECRET}, key=len, reverse=True):
        text = text.replace(secret, MASK)  # longest first, so a secret containing another is masked whole
    return _TOKEN_SHAPES.sub(MASK, text)
