"""Model spec parsing, option checks and the user-mistake errors, none of which needs a model."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from bot.llm import (
    BadModelSpec,
    LLMError,
    Message,
    MissingAPIKey,
    ModelSpec,
    ModelUnavailable,
    open_llm,
    parse_model_spec,
)
from bot.llm.keys import is_loopback
from bot.llm.spec import VALID_FORMS

REPO = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("text, expected", [
    ("llamacpp:bundled", ModelSpec("llamacpp", "bundled")),
    ("  llamacpp:/models/x.gguf ", ModelSpec("llamacpp", "/models/x.gguf")),
    ("llamacpp:hf:Qwen/Qwen2.5-Coder-1.5B-Instruct-GGUF/q4.gguf",
     ModelSpec("llamacpp", "q4.gguf", hub_repo="Qwen/Qwen2.5-Coder-1.5B-Instruct-GGUF")),
    ("llamacpp:hf:owner/repo/sub/dir/m.gguf", ModelSpec("llamacpp", "sub/dir/m.gguf", hub_repo="owner/repo")),
    ("openai:gpt-4o-mini", ModelSpec("openai", "gpt-4o-mini")),
    ("openai:meta-llama/Llama-3-8b:free", ModelSpec("openai", "meta-llama/Llama-3-8b:free")),
    ("transformers:Qwen/Qwen2.5-Coder-0.5B-Instruct", ModelSpec("transformers", "Qwen/Qwen2.5-Coder-0.5B-Instruct")),
    ("scripted:answers.yaml", ModelSpec("scripted", "answers.yaml")),
])
def test_parse_round_trips(text: str, expected: ModelSpec) -> None:
    spec = parse_model_spec(text)
    assert spec == expected
    assert parse_model_spec(str(spec)) == spec


@pytest.mark.parametrize("text", ["gpt-4o", "ollama:llama3", "", "  ", "LLAMACPP:bundled", "hf:owner/repo/x.gguf"])
def test_unknown_prefix_lists_every_valid_form(text: str) -> None:
    with pytest.raises(BadModelSpec) as err:
        parse_model_spec(text)
    message = str(err.value)
    assert "\n" not in message
    for form in VALID_FORMS:
        assert form in message


@pytest.mark.parametrize("text, hint", [("openai:", "openai:gpt-4o-mini"), ("llamacpp: ", "llamacpp:bundled"),
                                        ("llamacpp:hf:owner/x.gguf", "OWNER/REPO/FILE.gguf"),
                                        ("llamacpp:hf:owner/repo/model.bin", "OWNER/REPO/FILE.gguf")])
def test_incomplete_specs_say_what_to_write(text: str, hint: str) -> None:
    with pytest.raises(BadModelSpec, match="e.g. |write ") as err:
        parse_model_spec(text)
    assert hint in str(err.value)


def test_every_error_is_one_family() -> None:
    from bot.llm import errors

    family = [v for v in vars(errors).values() if isinstance(v, type) and issubclass(v, Exception)]
    assert len(family) >= 6 and all(issubclass(cls, LLMError) for cls in family)


def test_missing_key_names_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with pytest.raises(MissingAPIKey, match="OPENAI_API_KEY") as err:
        open_llm("openai:gpt-4o-mini")
    assert "--api-key" in str(err.value)
    with pytest.raises(MissingAPIKey, match="OPENAI_API_KEY"):
        open_llm("openai:some-model", api_base="https://inference.example.invalid/v1")


def test_loopback_server_needs_no_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")  # the env var is read when no option is given
    llm = open_llm("openai:local-model")
    assert llm.api_base == "http://127.0.0.1:9/v1"
    open_llm("openai:local-model", api_base="http://localhost:8080/v1")


@pytest.mark.parametrize("base, loop", [("http://127.0.0.1:8000/v1", True), ("http://127.1.2.3/v1", True),
                                        ("http://localhost/v1", True), ("http://[::1]:80/v1", True),
                                        ("http://10.0.0.1/v1", False), ("https://api.example.invalid/v1", False),
                                        (None, False), ("not a url", False)])
def test_is_loopback(base: str | None, loop: bool) -> None:
    assert is_loopback(base) is loop


def test_a_file_that_is_not_gguf_is_refused_before_llama_cpp(tmp_path: Path) -> None:
    fake = tmp_path / "model.gguf"
    fake.write_bytes(b"PK\x03\x04 this is a zip, not a model")
    with pytest.raises(ModelUnavailable, match="not a GGUF model") as err:
        open_llm(f"llamacpp:{fake}")
    assert str(fake) in str(err.value)
    (tmp_path / "empty.gguf").write_bytes(b"")
    with pytest.raises(ModelUnavailable, match="not a GGUF model"):
        open_llm(f"llamacpp:{tmp_path / 'empty.gguf'}")


def test_missing_model_file_and_directory(tmp_path: Path) -> None:
    with pytest.raises(ModelUnavailable, match="no model file at .*llamacpp:bundled"):
        open_llm(f"llamacpp:{tmp_path / 'absent.gguf'}")
    with pytest.raises(ModelUnavailable, match="is a directory.*transformers:"):
        open_llm(f"llamacpp:{tmp_path}")


def test_options_that_do_not_apply_are_refused(tmp_path: Path) -> None:
    script = tmp_path / "s.json"
    script.write_text('["a"]')
    with pytest.raises(BadModelSpec, match="api_key do not apply to scripted: models"):
        open_llm(f"scripted:{script}", api_key="sk-123")
    with pytest.raises(BadModelSpec, match="n_ctx do not apply to openai: .*takes api_base, api_key"):
        open_llm("openai:m", api_base="http://127.0.0.1:9/v1", n_ctx=2048)
    # None means "not given": a CLI passes every flag it has.
    assert open_llm(f"scripted:{script}", api_key=None, api_base=None).complete([Message("user", "q")]).text == "a"


def test_messages_are_typed_records() -> None:
    with pytest.raises(ValueError, match="role must be one of"):
        Message("robot", "hi")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="content must be str"):
        Message("user", None)  # type: ignore[arg-type]
    llm = open_llm("openai:m", api_base="http://127.0.0.1:9/v1")
    with pytest.raises(TypeError, match="Message records, not dict"):
        llm.complete([{"role": "user", "content": "hi"}])  # type: ignore[list-item]


def _run(code: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], cwd=REPO, capture_output=True, text=True,
                          timeout=120, env={**os.environ, **env})


def test_importing_bot_llm_has_no_heavy_imports() -> None:
    r = _run("""
        import sys
        import bot.llm
        from bot.llm import open_llm, parse_model_spec, ScriptedLLM, ensure_bundled_model
        heavy = [m for m in ("torch", "transformers", "llama_cpp", "openai", "huggingface_hub", "tqdm")
                 if m in sys.modules]
        print(heavy)
    """)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "[]"


def test_hub_gguf_without_internet_is_a_clear_error(tmp_path: Path) -> None:
    # HF_HUB_OFFLINE makes the hub client fail at once, as it would on a machine without internet.
    r = _run("""
        from bot.llm import open_llm, ModelUnavailable
        try:
            open_llm("llamacpp:hf:someone/some-repo-GGUF/model-q4.gguf")
        except ModelUnavailable as exc:
            print("ERR", exc)
    """, HF_HUB_OFFLINE="1", HF_HOME=str(tmp_path))
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("ERR "), r.stdout + r.stderr
    assert "someone/some-repo-GGUF/model-q4.gguf" in r.stdout and "llamacpp:/path/to/file.gguf" in r.stdout


def test_transformers_missing_model_is_a_clear_error(tmp_path: Path) -> None:
    r = _run(f"""
        from bot.llm import open_llm, ModelUnavailable
        try:
            open_llm("transformers:{tmp_path}/no-such-model")
        except ModelUnavailable as exc:
            print("ERR", exc)
    """, HF_HUB_OFFLINE="1", HF_HOME=str(tmp_path))
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("ERR cannot load"), r.stdout + r.stderr
