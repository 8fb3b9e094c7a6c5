"""Find the GGUF file a `llamacpp:` spec names, and refuse anything that is not GGUF before llama.cpp sees it."""
from __future__ import annotations

from pathlib import Path

from bot.llm.bundled import LOCAL_EXTRA, ensure_bundled_model
from bot.llm.errors import ModelUnavailable
from bot.llm.spec import ModelSpec

GGUF_MAGIC = b"GGUF"


def resolve_gguf(spec: ModelSpec, *, progress: bool = True) -> Path:
    if spec.hub_repo:
        path = _from_hub(spec.hub_repo, spec.target)
    elif spec.target == "bundled":
        path = ensure_bundled_model(progress=progress)
    else:
        path = Path(spec.target).expanduser()
    check_gguf(path)
    return path


def check_gguf(path: Path) -> None:
    """llama.cpp answers a wrong file with a crash or a vague 'failed to load'; we say what is wrong."""
    if path.is_dir():
        raise ModelUnavailable(f"{path} is a directory; llamacpp: needs a .gguf file (for a directory of "
                               f"safetensors use transformers:{path})")
    try:
        with path.open("rb") as f:
            magic = f.read(4)
    except FileNotFoundError:
        raise ModelUnavailable(f"no model file at {path}: give the path of a .gguf file, "
                               "or use llamacpp:bundled") from None
    except OSError as exc:
        raise ModelUnavailable(f"cannot read the model file {path}: {exc.strerror or exc}") from exc
    if magic != GGUF_MAGIC:
        raise ModelUnavailable(f"{path} is not a GGUF model (it starts with {magic!r}, not b'GGUF'); convert it "
                               f"with llama.cpp's convert_hf_to_gguf.py or pick a .gguf file")


def _from_hub(repo: str, filename: str) -> Path:
    try:
        from huggingface_hub import hf_hub_download
        from huggingface_hub.errors import EntryNotFoundError, LocalEntryNotFoundError, RepositoryNotFoundError
    except ImportError:
        raise ModelUnavailable(f"llamacpp:hf: needs huggingface_hub: pip install huggingface_hub "
                               f"(or pip install '{LOCAL_EXTRA}')") from None
    offline = (f"could not download {repo}/{filename} from the Hugging Face Hub ({{}}); without internet, "
               f"copy the .gguf here and use llamacpp:/path/to/file.gguf")
    try:
        return Path(hf_hub_download(repo_id=repo, filename=filename))
    except LocalEntryNotFoundError as exc:  # unreachable and not cached; caught before its base class below
        raise ModelUnavailable(offline.format("offline, and not in the local cache")) from exc
    except (RepositoryNotFoundError, EntryNotFoundError) as exc:
        raise ModelUnavailable(f"the Hugging Face Hub has no {filename} in {repo}: check the spelling "
                               f"(llamacpp:hf:OWNER/REPO/FILE.gguf)") from exc
    except Exception as exc:  # offline, proxy, HTTP errors: the hub client raises many kinds
        first_line = str(exc).splitlines()[0][:160] if str(exc) else "no detail"
        raise ModelUnavailable(offline.format(f"{type(exc).__name__}: {first_line}")) from exc
