"""Model spec strings, parsed in one place, and `open_llm`, the one place that picks a backend.

    openai:MODEL                 any OpenAI-compatible server (api_base / api_key options or env)
    llamacpp:bundled             the bundled offline model (the default)
    llamacpp:/path/model.gguf    a local GGUF file
    llamacpp:hf:OWNER/REPO/FILE.gguf   a GGUF from the Hugging Face Hub (needs the internet)
    transformers:ID_OR_DIR       a Hub id or a local directory, in-process
    scripted:FILE                replays answers from a JSON/YAML list (tests)
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from bot.llm.errors import BadModelSpec, ToolsUnsupported

Kind = Literal["openai", "llamacpp", "transformers", "scripted"]
DEFAULT_MODEL = "llamacpp:bundled"
VALID_FORMS = ("openai:MODEL", "llamacpp:bundled", "llamacpp:/path/to/model.gguf",
               "llamacpp:hf:OWNER/REPO/FILE.gguf", "transformers:HUB_ID_OR_DIR", "scripted:FILE.json|yaml")


@dataclass(frozen=True)
class ModelSpec:
    kind: Kind
    target: str  # model name, file path, Hub id/dir, or script path; for llamacpp:hf: the file in the repo
    hub_repo: str | None = None  # llamacpp:hf: only, "OWNER/REPO"

    def __str__(self) -> str:
        if self.hub_repo:
            return f"{self.kind}:hf:{self.hub_repo}/{self.target}"
        return f"{self.kind}:{self.target}"


def parse_model_spec(text: str) -> ModelSpec:
    raw = (text or "").strip()
    prefix, sep, rest = raw.partition(":")
    forms = ", ".join(VALID_FORMS)
    if not sep or prefix not in ("openai", "llamacpp", "transformers", "scripted"):
        raise BadModelSpec(f"unknown model spec {raw!r}: use one of {forms}")
    rest = rest.strip()
    if not rest:
        example = {"openai": "openai:gpt-4o-mini", "llamacpp": "llamacpp:bundled",
                   "transformers": "transformers:Qwen/Qwen2.5-Coder-0.5B-Instruct",
                   "scripted": "scripted:answers.json"}[prefix]
        raise BadModelSpec(f"model spec {raw!r} names no model after '{prefix}:', e.g. {example}")
    if prefix == "llamacpp" and rest.startswith("hf:"):
        owner_repo_file = rest[3:].strip("/").split("/")
        if len(owner_repo_file) < 3 or not all(owner_repo_file) or not owner_repo_file[-1].endswith(".gguf"):
            raise BadModelSpec(f"model spec {raw!r}: write llamacpp:hf:OWNER/REPO/FILE.gguf")
        return ModelSpec("llamacpp", "/".join(owner_repo_file[2:]), hub_repo="/".join(owner_repo_file[:2]))
    return ModelSpec(prefix, rest)  # type: ignore[arg-type]  # prefix was checked against Kind above


TOOL_KINDS: tuple[Kind, ...] = ("openai", "llamacpp", "scripted")  # backends with function calling


def require_tools(spec: str | ModelSpec) -> None:
    """Fail early, before a model is loaded, when an agent needs function calling and the backend has none."""
    parsed = spec if isinstance(spec, ModelSpec) else parse_model_spec(spec)
    if parsed.kind not in TOOL_KINDS:
        raise ToolsUnsupported(f"{parsed} cannot call tools, which --agent tool-call needs: use an openai: or "
                               "llamacpp: model, or another --agent")
