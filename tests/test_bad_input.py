"""The bad-input matrix: each bad call across the public API must raise a ValueError or
TypeError whose message names the offending argument (and says what was expected).

PYTEST_DONT_REWRITE: CPython 3.11.7's ast.parse trips over this table under pytest's assertion
rewriting ("AST constructor recursion depth mismatch"); the asserts carry their own messages.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

import nbhelpers as nb

x = torch.randn(4, 8)
q5 = torch.randn(5, 8)
ids = torch.tensor([[1, 2, 3]])
small = nb.GPT1Config(vocab_size=10, n_ctx=4, d_model=8, n_layers=1, n_heads=2)
model = nb.GPT1(small)
mha = nb.MultiHeadAttention(8, 2)
self_attention = nb.SelfAttention(8, d_k=4)


grammar = nb.JapaneseGrammar()
tokenizer = grammar.tokenizer
lm = nb.GPT1(
    nb.GPT1Config(vocab_size=tokenizer.vocab_size, n_ctx=8, d_model=8, n_layers=1, n_heads=2)
)
prompt = tokenizer.encode("犬 が")


def env_device(value):
    def call(monkeypatch):
        monkeypatch.setenv("NBHELPERS_DEVICE", value)
        nb.get_device()

    return call


# (id, call, argument named in the message). Calls taking `monkeypatch` get one.
CASES = [
    # similarity scores and softmax
    ("scores Q not a tensor", lambda: nb.similarity_scores([[1.0]], x), "Q"),
    ("scores int Q", lambda: nb.similarity_scores(x.long(), x), "Q"),
    ("scores d_k mismatch", lambda: nb.similarity_scores(x, torch.randn(4, 6)), "d_k"),
    ("scores rank 1 K", lambda: nb.similarity_scores(x, torch.randn(8)), "K"),
    ("softmax int scores", lambda: nb.softmax(torch.tensor([1, 2])), "scores"),
    ("softmax NaN scores", lambda: nb.softmax(torch.tensor([0.0, float("nan")])), "scores"),
    ("softmax +inf scores", lambda: nb.softmax(torch.tensor([0.0, float("inf")])), "scores"),
    # attention
    ("attention K/V length", lambda: nb.attention(x, x, torch.randn(5, 8)), "K and V"),
    ("attention int V", lambda: nb.attention(x, x, x.int()), "V"),
    ("attention rank 1 Q", lambda: nb.attention(torch.randn(8), x, x), "Q"),
    (
        "attention batch dims",
        lambda: nb.attention(torch.randn(2, 4, 8), torch.randn(3, 4, 8), torch.randn(3, 4, 8)),
        "batch dimensions",
    ),
    ("attention mask shape", lambda: nb.attention(x, x, x, nb.causal_mask(5)), "mask"),
    (
        "attention bool mask",
        lambda: nb.attention(x, x, x, torch.ones(4, 4, dtype=torch.bool)),
        "mask",
    ),
    ("attention mask NaN", lambda: nb.attention(x, x, x, torch.full((4, 4), float("nan"))), "mask"),
    ("attention mask list", lambda: nb.attention(x, x, x, [[0.0] * 4] * 4), "mask"),
    (
        "sdpa mask shape",
        lambda: nb.scaled_dot_product_attention(q5, x, x, nb.causal_mask(4)),
        "mask",
    ),
    ("sdpa d_k mismatch", lambda: nb.scaled_dot_product_attention(x, torch.randn(4, 3), x), "d_k"),
    # SelfAttention
    ("SelfAttention d_model 0", lambda: nb.SelfAttention(0), "d_model"),
    ("SelfAttention d_k float", lambda: nb.SelfAttention(8, d_k=2.5), "d_k"),
    ("SelfAttention X width", lambda: self_attention(torch.randn(4, 6)), "d_model"),
    # masks
    ("causal_mask n=0", lambda: nb.causal_mask(0), "n"),
    ("causal_mask m<n", lambda: nb.causal_mask(4, 2), "m"),
    ("padding_mask too long", lambda: nb.padding_mask([3, 6], 5), "lengths"),
    ("padding_mask float lengths", lambda: nb.padding_mask([2.5], 5), "lengths"),
    ("padding_mask n", lambda: nb.padding_mask([1], 0), "n"),
    # multi-head
    ("MHA heads do not divide", lambda: nb.MultiHeadAttention(12, 5), "num_heads=5"),
    ("MHA zero heads", lambda: nb.MultiHeadAttention(8, 0), "num_heads"),
    ("MHA x width", lambda: mha(torch.randn(4, 6)), "d_model"),
    ("MHA mask shape", lambda: mha(x, mask=torch.zeros(3, 3)), "mask"),
    ("split_heads divisibility", lambda: nb.split_heads(x, 3), "num_heads=3"),
    ("merge_heads rank", lambda: nb.merge_heads(x), "x"),
    # GPT-1
    ("config heads", lambda: nb.GPT1Config(vocab_size=10, d_model=10, n_heads=4), "n_heads"),
    ("config vocab", lambda: nb.GPT1Config(vocab_size=0), "vocab_size"),
    ("config dropout", lambda: nb.GPT1Config(vocab_size=5, dropout=1.5), "dropout"),
    ("one_hot id out of range", lambda: nb.one_hot(torch.tensor([0, 5]), 5), "ids"),
    ("one_hot float ids", lambda: nb.one_hot(torch.tensor([0.0, 1.0]), 5), "ids"),
    ("one_hot vocab", lambda: nb.one_hot(torch.tensor([0]), 0), "vocab_size"),
    ("GPT1 config type", lambda: nb.GPT1({"vocab_size": 5}), "config"),
    ("GPT1 ids out of range", lambda: model(torch.tensor([[1, 10]])), "ids"),
    ("GPT1 negative id", lambda: model(torch.tensor([[-1, 2]])), "ids"),
    (
        "GPT1 prefix longer than context",
        lambda: model(torch.zeros(1, 5, dtype=torch.long)),
        "n_ctx",
    ),
    ("GPT1 ids not a tensor", lambda: model([[1, 2]]), "ids"),
    # corpus, inference, KV cache, training
    ("tokenizer unknown token", lambda: tokenizer.encode("犬 が 宇宙船"), "宇宙船"),
    (
        "grammar impossible prefix",
        lambda: grammar.true_next_token_distribution(["が", "犬"]),
        "prefix",
    ),
    (
        "next_token temperature 0",
        lambda: nb.next_token_distribution(lm, prompt, temperature=0),
        "temperature",
    ),
    (
        "next_token temperature negative",
        lambda: nb.next_token_distribution(lm, prompt, temperature=-1.0),
        "temperature",
    ),
    ("next_token top_k 0", lambda: nb.next_token_distribution(lm, prompt, top_k=0), "top_k"),
    (
        "next_token id out of range",
        lambda: nb.next_token_distribution(lm, torch.tensor([1, 999])),
        "ids",
    ),
    (
        "next_token prefix longer than context",
        lambda: nb.next_token_distribution(lm, torch.ones(9, dtype=torch.long)),
        "n_ctx",
    ),
    ("generate negative max_new_tokens", lambda: nb.generate(lm, prompt, -1), "max_new_tokens"),
    ("generate top_k 0", lambda: nb.generate(lm, prompt, 3, top_k=0), "top_k"),
    ("log_likelihood float ids", lambda: nb.log_likelihood(lm, prompt.float()), "ids"),
    ("kv cache too long", lambda: nb.generate_with_cache(lm, prompt, 10), "max_new_tokens"),
    ("kv cache model type", lambda: nb.generate_with_cache(mha, prompt, 2), "model"),
    # device, seeding, plotting, checks, widgets
    ("device unknown", env_device("tpu"), "NBHELPERS_DEVICE"),
    ("seed negative", lambda: nb.seed_everything(-1), "seed"),
    ("seed float", lambda: nb.seed_everything(0.5), "seed"),
    ("heatmap rank", lambda: nb.attention_heatmap(np.ones(3)), "weights"),
    ("heatmap labels", lambda: nb.attention_heatmap(np.ones((2, 2)), ["a"]), "row_labels"),
    ("check_close shapes", lambda: nb.check_close("c", torch.zeros(2), torch.zeros(3)), "ours"),
    (
        "explorer scores shape",
        lambda: nb.AttentionMatrixExplorer(["a", "b"], torch.zeros(3, 3)),
        "scores",
    ),
]


@pytest.mark.parametrize(("call", "argument"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_bad_call_names_the_argument(call, argument, monkeypatch):
    with pytest.raises((ValueError, TypeError, RuntimeError)) as error:
        call(monkeypatch) if call.__code__.co_argcount else call()
    assert isinstance(error.value, (ValueError, TypeError)) or "NBHELPERS_DEVICE" in str(
        error.value
    )
    assert argument in str(error.value), f"message does not name {argument!r}: {error.value}"


def test_the_matrix_is_large():
    assert len(CASES) >= 30
