"""In-process Hugging Face transformers: a Hub id or a local directory, on CUDA when there is one."""
from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bot.llm.errors import LLMRequestFailed, ModelUnavailable
from bot.llm.spec import ModelSpec
from bot.llm.types import Completion, Message, check_messages

EXTRA = "fixbot[transformers]"


class TransformersLLM:
    def __init__(self, id_or_dir: str, *, device: str | None = None, name: str | None = None) -> None:
        try:
            import torch
            from transformers import AutoModelForCausalLM, AutoTokenizer
        except ImportError:
            raise ModelUnavailable(f"transformers: models need torch and transformers: pip install '{EXTRA}'") from None
        self.name = name or f"transformers:{id_or_dir}"
        self._torch = torch
        self.device = device or ("cuda" if torch.cuda.is_available() else "cpu")
        local = Path(id_or_dir).expanduser()
        source = str(local) if local.exists() else id_or_dir
        try:
            self.tokenizer = AutoTokenizer.from_pretrained(source)
            # "auto" keeps the checkpoint's dtype (bf16/fp16 checkpoints stay half size); on CPU, half
            # precision matmuls are slow or missing, so there we compute in float32.
            dtype: Any = "auto" if self.device != "cpu" else torch.float32
            self.model = AutoModelForCausalLM.from_pretrained(source, dtype=dtype).to(self.device)
        except OSError as exc:  # not found locally, offline, or no such repo: transformers raises OSError
            hint = "" if local.exists() else " (no such local directory, and the Hub could not provide it: offline?)"
            raise ModelUnavailable(f"cannot load {id_or_dir}{hint}: {str(exc).splitlines()[0][:200]}") from exc
        if not getattr(self.tokenizer, "chat_template", None):
            raise ModelUnavailable(f"{id_or_dir} has no chat template in its tokenizer: use an instruct/chat model")
        self.model.eval()
        self._lock = threading.Lock()  # seeding and generation must not interleave between threads

    @classmethod
    def from_spec(cls, spec: ModelSpec, *, device: str | None = None) -> TransformersLLM:
        return cls(spec.target, device=device, name=str(spec))

    def complete(self, messages: Sequence[Message], *, temperature: float = 0.0, max_tokens: int = 512,
                 seed: int | None = None) -> Completion:
        msgs = [m.to_dict() for m in check_messages(messages)]
        start = time.monotonic()
        torch = self._torch
        # Render to text, then tokenize: apply_chat_template's return type has changed across versions.
        prompt = self.tokenizer.apply_chat_template(msgs, tokenize=False, add_generation_prompt=True)
        inputs = self.tokenizer(prompt, return_tensors="pt", add_special_tokens=False).to(self.device)
        n_prompt = int(inputs["input_ids"].shape[1])
        sampling = temperature > 0
        options: dict[str, Any] = {"max_new_tokens": max_tokens, "do_sample": sampling}
        if sampling:
            options["temperature"] = temperature
        else:  # the model's generation_config may carry sampling defaults that greedy decoding warns about
            options.update(temperature=None, top_p=None, top_k=None)
        pad = self.tokenizer.pad_token_id
        options["pad_token_id"] = pad if pad is not None else self.tokenizer.eos_token_id
        with self._lock, torch.inference_mode():
            if seed is not None:
                torch.manual_seed(seed)
            try:
                out = self.model.generate(**inputs, **options)
            except (RuntimeError, ValueError) as exc:
                raise LLMRequestFailed(f"{self.name} failed to generate: {str(exc).splitlines()[0][:200]}") from exc
        new = out[0, n_prompt:]
        eos = self.tokenizer.eos_token_id
        finished = len(new) < max_tokens or (eos is not None and int(new[-1]) == eos)
        return Completion(text=self.tokenizer.decode(new, skip_special_tokens=True), prompt_tokens=n_prompt,
                          completion_tokens=int(new.shape[0]), latency_s=time.monotonic() - start, model=self.name,
                          finish_reason="stop" if finished else "length")
