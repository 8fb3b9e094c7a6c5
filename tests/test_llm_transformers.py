"""The transformers: backend on a tiny random model that the test builds and saves itself (no Hub)."""
from __future__ import annotations

from pathlib import Path

import pytest

from bot.llm import LLM, Message, open_llm

CHAT_TEMPLATE = ("{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n{% endfor %}"
                 "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}")
SPECIALS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]


@pytest.fixture(scope="module")
def tiny_model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A byte-level BPE tokenizer trained here in milliseconds and a 2-layer Qwen2: the real model
    family's shapes, so AutoTokenizer/AutoModel take the same code paths as for Qwen2.5-Coder."""
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast, Qwen2Config, Qwen2ForCausalLM

    core = Tokenizer(models.BPE())
    core.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    core.decoder = decoders.ByteLevel()
    corpus = ["def add(a, b):\n    return a + b\n", "fix the bug in this function", "assert add(2, 3) == 5"] * 10
    core.train_from_iterator(corpus, trainers.BpeTrainer(vocab_size=400, special_tokens=SPECIALS,
                                                         initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=core, eos_token="<|im_end|>", pad_token="<|endoftext|>")
    tokenizer.chat_template = CHAT_TEMPLATE
    torch.manual_seed(0)
    config = Qwen2Config(vocab_size=core.get_vocab_size(), hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                         num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=256,
                         pad_token_id=core.token_to_id("<|endoftext|>"), eos_token_id=core.token_to_id("<|im_end|>"))
    out = tmp_path_factory.mktemp("tiny-qwen2")
    Qwen2ForCausalLM(config).save_pretrained(out)
    tokenizer.save_pretrained(out)
    return out


@pytest.fixture(scope="module")
def tiny_llm(tiny_model_dir: Path) -> LLM:
    return open_llm(f"transformers:{tiny_model_dir}", device="cpu")


ASK = [Message("system", "fix the bug"), Message("user", "def add(a, b): return a - b")]


def test_generates_with_the_chat_template(tiny_llm: LLM, tiny_model_dir: Path) -> None:
    from transformers import AutoTokenizer

    c = tiny_llm.complete(ASK, max_tokens=6)
    rendered = "<|im_start|>system\nfix the bug<|im_end|>\n<|im_start|>user\ndef add(a, b): return a - b<|im_end|>\n" \
               "<|im_start|>assistant\n"
    assert c.prompt_tokens == len(AutoTokenizer.from_pretrained(tiny_model_dir)(rendered)["input_ids"])
    assert 1 <= c.completion_tokens <= 6 and c.finish_reason in ("stop", "length")
    assert isinstance(c.text, str) and c.latency_s > 0 and c.model.startswith("transformers:")
    assert not any(tok in c.text for tok in SPECIALS)  # special tokens are skipped in the text


def test_greedy_is_deterministic_at_temperature_zero(tiny_llm: LLM) -> None:
    runs = {tiny_llm.complete(ASK, temperature=0.0, max_tokens=8).text for _ in range(3)}
    assert len(runs) == 1


def test_sampling_is_repeatable_with_a_seed(tiny_llm: LLM) -> None:
    a = tiny_llm.complete(ASK, temperature=1.5, max_tokens=12, seed=7).text
    b = tiny_llm.complete(ASK, temperature=1.5, max_tokens=12, seed=7).text
    assert a == b
    others = {tiny_llm.complete(ASK, temperature=1.5, max_tokens=12, seed=s).text for s in range(8, 14)}
    assert len(others | {a}) > 1  # different seeds explore
