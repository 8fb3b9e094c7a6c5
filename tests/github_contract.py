"""GitHub's REST contract for the double: `shared/data/github/rest-api-subset.json`, loaded once, and the checks
that hold every request the double receives and every response it sends to it with openapi-core. A check that
fails appends a one-line violation (where in the payload, not the whole payload) to the list it is given."""
from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from email.message import Message
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, quote, unquote, urlsplit

from openapi_core import OpenAPI
from openapi_core.datatypes import RequestParameters
from openapi_schema_validator import OAS30Validator
from werkzeug.datastructures import Headers, ImmutableMultiDict

CONTRACT = Path(__file__).resolve().parents[2] / "shared" / "data" / "github" / "rest-api-subset.json"


@functools.lru_cache(maxsize=1)
def contract() -> OpenAPI:
    return OpenAPI.from_file_path(str(CONTRACT))


@functools.lru_cache(maxsize=1)
def _raw_contract() -> dict:
    return json.loads(CONTRACT.read_text())


@functools.lru_cache(maxsize=1)
def _basic_error() -> OAS30Validator:
    return OAS30Validator(_raw_contract()["components"]["schemas"]["basic-error"])


# openapi-core's adapters, written out so the path can differ from the wire: an OpenAPI path template cannot
# carry "/" in a parameter, but GitHub's {ref} does ("heads/fixbot/…"), so the ref's slashes are encoded first.
@dataclass
class ContractRequest:
    path: str
    method: str
    parameters: RequestParameters
    body: bytes | None
    content_type: str
    host_url: str = "https://api.github.com"  # the contract's server; the double's own address is irrelevant


@dataclass
class ContractResponse:
    data: bytes
    status_code: int
    content_type: str
    headers: Headers


def _contract_path(path: str) -> str:
    m = re.match(r"^(/repos/[^/]+/[^/]+/git/refs?/)(.+)$", path)
    return m.group(1) + quote(m.group(2), safe="") if m else path


def _declared(request: ContractRequest) -> set[int]:
    """The statuses the contract lists for the operation this request matched."""
    for template, ops in _raw_contract()["paths"].items():
        if re.fullmatch(re.sub(r"\{[^}]+\}", "[^/]+", template), request.path) and request.method in ops:
            return {int(code) for code in ops[request.method]["responses"] if code.isdigit()}
    return set()


def contract_request(method: str, target: str, headers: Message, raw: bytes) -> tuple[ContractRequest, str]:
    """The request as openapi-core sees it, and its decoded path (as the double routes it)."""
    split = urlsplit(target)
    path = unquote(split.path)
    return ContractRequest(
        _contract_path(path), method.lower(),
        RequestParameters(query=ImmutableMultiDict(parse_qsl(split.query)), header=Headers(list(headers.items())),
                          cookie=ImmutableMultiDict()),
        raw or None, headers.get("Content-Type", "application/octet-stream").lower()), path


def check(violations: list[str], what: str, validate: Callable[[], Any]) -> None:
    try:
        validate()
    except Exception as exc:
        errors = getattr(exc, "schema_errors", None) or getattr(exc.__cause__, "schema_errors", None) or ()
        detail = "; ".join(f"{e.json_path}: {e.message}" for e in errors)  # where, not the whole payload
        violations.append(f"{what}: {type(exc).__name__}: {detail or exc}")


def check_request(violations: list[str], request: ContractRequest, what: str) -> None:
    check(violations, what, lambda: contract().validate_request(request))


def check_response(violations: list[str], request: ContractRequest, status: int, headers: dict[str, str],
                   data: bytes, injected: bool) -> None:
    what = f"response {status} to {request.method.upper()} {request.path}"
    response = ContractResponse(data, status, headers.get("Content-Type", "").split(";")[0],
                                Headers(list(headers.items())))
    if status >= 400:
        # GitHub's description omits the error statuses every endpoint can give (401, 403 rate limits, 429,
        # 5xx, most 404s): an error the operation declares is checked in full, any other must be a basic-error.
        declared = status in _declared(request)
        if injected or not declared:
            check(violations, what, lambda: _basic_error().validate(json.loads(data)))
            return
    check(violations, what, lambda: contract().validate_response(request, response))
