"""The host's pip settings that a build container needs: the index, a CA bundle, timeouts.

Read at run time from pip's own configuration (`pip config list`: files and PIP_* variables), so a machine behind
an intercepting proxy, or one with a private index, builds the same way its own pip installs. Host paths (a
find-links folder) mean nothing in the container and are left out; a CA bundle is copied in.
"""
from __future__ import annotations

import ast
import hashlib
import subprocess
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

from pip._internal.models.index import PyPI  # pip's own default index; no host name is written here

CA_PATH = "/etc/fixbot/pip-ca.pem"
# pip setting -> the variable that carries it into the container (values that are URLs or plain options)
PASSED = {"index-url": "PIP_INDEX_URL", "extra-index-url": "PIP_EXTRA_INDEX_URL", "trusted-host": "PIP_TRUSTED_HOST",
          "timeout": "PIP_DEFAULT_TIMEOUT", "default-timeout": "PIP_DEFAULT_TIMEOUT", "retries": "PIP_RETRIES",
          "find-links": "PIP_FIND_LINKS"}
RANK = {"global": 0, "user": 1, "site": 2, "": 3}  # pip's precedence; ":env:" (PIP_* variables) wins


@dataclass(frozen=True, kw_only=True)
class PipSettings:
    env: Mapping[str, str] = field(default_factory=dict)
    files: Mapping[str, bytes] = field(default_factory=dict)  # absolute container paths -> content
    hosts: tuple[str, ...] = ()  # where the build may connect: the index and its file hosts

    @property
    def digest(self) -> str:
        # The index decides what a build installs; the CA bundle and timeouts do not.
        keys = sorted((k, v) for k, v in self.env.items() if k in ("PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL",
                                                                   "PIP_FIND_LINKS"))
        return hashlib.sha256(repr(keys).encode()).hexdigest()


def read_pip_config() -> dict[str, str]:
    """pip's effective settings by name (`cert`, `index-url`, ...), the highest-precedence value of each."""
    done = subprocess.run([sys.executable, "-m", "pip", "config", "list"], capture_output=True, text=True,
                          timeout=60)
    ranked: dict[str, tuple[int, str]] = {}
    for line in done.stdout.splitlines():
        key, sep, raw = line.partition("=")
        if not sep:
            continue
        variant, _, name = key.rpartition(".")
        try:
            value = str(ast.literal_eval(raw))
        except (ValueError, SyntaxError):
            value = raw.strip("'\"")
        rank = RANK.get(variant.split(".")[0], 1) if not variant.startswith(":env:") else 9
        if name not in ranked or rank >= ranked[name][0]:
            ranked[name] = (rank, value)
    return {name: value for name, (_rank, value) in ranked.items()}


def _host(url: str) -> str | None:
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return None
    return f"{parts.hostname}:{parts.port}" if parts.port else parts.hostname


def pip_settings(extra_index_urls: Iterable[str] = (), config: Mapping[str, str] | None = None) -> PipSettings:
    """The settings for a build container: from pip's configuration here, plus the index URLs that the
    project's own requirements files name (their hosts are allowed too)."""
    config = read_pip_config() if config is None else config
    env: dict[str, str] = {}
    for name, variable in PASSED.items():
        if value := config.get(name):
            words = value.split()
            if name == "find-links":  # a folder on this machine is not in the container
                words = [w for w in words if _host(w)]
            if words:
                env[variable] = " ".join(words)
    files = {}
    if (cert := config.get("cert")) and Path(cert).is_file():
        files[CA_PATH] = Path(cert).read_bytes()
        env["PIP_CERT"] = CA_PATH
        env["SSL_CERT_FILE"] = env["REQUESTS_CA_BUNDLE"] = CA_PATH  # build backends that fetch with urllib/requests
    urls = [env.get("PIP_INDEX_URL", PyPI.simple_url), *env.get("PIP_EXTRA_INDEX_URL", "").split(),
            *env.get("PIP_FIND_LINKS", "").split(), *extra_index_urls]
    hosts = [h for h in map(_host, urls) if h]
    if "PIP_INDEX_URL" not in env or _host(env["PIP_INDEX_URL"]) == PyPI.netloc:
        hosts.append(PyPI.file_storage_domain)  # PyPI's pages link to files on another host
    return PipSettings(env=env, files=files, hosts=tuple(dict.fromkeys(hosts)))
