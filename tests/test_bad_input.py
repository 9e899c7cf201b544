"""The bad-input matrix: each bad call across the public API must raise a ValueError or
TypeError whose message names the offending argument (and says what was expected).

PYTEST_DONT_REWRITE: CPython 3.11.7's ast.parse trips over this table under pytest's assertion
rewriting ("AST constructor recursion depth mismatch"); the asserts carry their own messages.
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
import torch

import nbhelpers as nb


def env_device(value):
    def call(o):
        o.monkeypatch.setenv("NBHELPERS_DEVICE", value)
        nb.get_device()

    return call


# (id, call, argument named in the message). Each call gets `o`: the shared objects below
# as attributes, and pytest's monkeypatch.
CASES = [
    # similarity scores and softmax
    ("scores Q not a tensor", lambda o: nb.similarity_scores([[1.0]], o.x), "Q"),
    ("scores int Q", lambda o: nb.similarity_scores(o.x.long(), o.x), "Q"),
    ("scores d_k mismatch", lambda o: nb.similarity_scores(o.x, torch.randn(4, 6)), "d_k"),
    ("scores rank 1 K", lambda o: nb.similarity_scores(o.x, torch.randn(8)), "K"),
    ("softmax int scores", lambda o: nb.softmax(torch.tensor([1, 2])), "scores"),
    ("softmax NaN scores", lambda o: nb.softmax(torch.tensor([0.0, float("nan")])), "scores"),
    ("softmax +inf scores", lambda o: nb.softmax(torch.tensor([0.0, float("inf")])), "scores"),
    # attention
    ("attention K/V length", lambda o: nb.attention(o.x, o.x, torch.randn(5, 8)), "K and V"),
    ("attention int V", lambda o: nb.attention(o.x, o.x, o.x.int()), "V"),
    ("attention rank 1 Q", lambda o: nb.attention(torch.randn(8), o.x, o.x), "Q"),
    (
        "attention batch dims",
        lambda o: nb.attention(torch.randn(2, 4, 8), torch.randn(3, 4, 8), torch.randn(3, 4, 8)),
        "batch dimensions",
    ),
    ("attention mask shape", lambda o: nb.attention(o.x, o.x, o.x, nb.causal_mask(5)), "mask"),
    (
        "attention bool mask",
        lambda o: nb.attention(o.x, o.x, o.x, torch.ones(4, 4, dtype=torch.bool)),
        "mask",
    ),
    (
        "attention mask NaN",
        lambda o: nb.attention(o.x, o.x, o.x, torch.full((4, 4), float("nan"))),
        "mask",
    ),
    ("attention mask list", lambda o: nb.attention(o.x, o.x, o.x, [[0.0] * 4] * 4), "mask"),
    (
        "sdpa mask shape",
        lambda o: nb.scaled_dot_product_attention(o.q5, o.x, o.x, nb.causal_mask(4)),
        "mask",
    ),
    (
        "sdpa d_k mismatch",
        lambda o: nb.scaled_dot_product_attention(o.x, torch.randn(4, 3), o.x),
        "d_k",
    ),
    # SelfAttention
    ("SelfAttention d_model 0", lambda o: nb.SelfAttention(0), "d_model"),
    ("SelfAttention d_k float", lambda o: nb.SelfAttention(8, d_k=2.5), "d_k"),
    ("SelfAttention X width", lambda o: o.self_attention(torch.randn(4, 6)), "d_model"),
    # masks
    ("causal_mask n=0", lambda o: nb.causal_mask(0), "n"),
    ("causal_mask m<n", lambda o: nb.causal_mask(4, 2), "m"),
    ("padding_mask too long", lambda o: nb.padding_mask([3, 6], 5), "lengths"),
    ("padding_mask float lengths", lambda o: nb.padding_mask([2.5], 5), "lengths"),
    ("padding_mask n", lambda o: nb.padding_mask([1], 0), "n"),
    # multi-head
    ("MHA heads do not divide", lambda o: nb.MultiHeadAttention(12, 5), "n_heads=5"),
    ("MHA zero heads", lambda o: nb.MultiHeadAttention(8, 0), "n_heads"),
    ("MHA x width", lambda o: o.mha(torch.randn(4, 6)), "d_model"),
    ("MHA mask shape", lambda o: o.mha(o.x, mask=torch.zeros(3, 3)), "mask"),
    ("split_heads divisibility", lambda o: nb.split_heads(o.x, 3), "n_heads=3"),
    ("merge_heads rank", lambda o: nb.merge_heads(o.x), "x"),
    # GPT-1
    ("config heads", lambda o: nb.GPT1Config(vocab_size=10, d_model=10, n_heads=4), "n_heads"),
    ("config vocab", lambda o: nb.GPT1Config(vocab_size=0), "vocab_size"),
    ("config dropout", lambda o: nb.GPT1Config(vocab_size=5, dropout=1.5), "dropout"),
    ("one_hot id out of range", lambda o: nb.one_hot(torch.tensor([0, 5]), 5), "ids"),
    ("one_hot float ids", lambda o: nb.one_hot(torch.tensor([0.0, 1.0]), 5), "ids"),
    ("one_hot vocab", lambda o: nb.one_hot(torch.tensor([0]), 0), "vocab_size"),
    ("GPT1 config type", lambda o: nb.GPT1({"vocab_size": 5}), "config"),
    ("GPT1 ids out of range", lambda o: o.model(torch.tensor([[1, 10]])), "ids"),
    ("GPT1 negative id", lambda o: o.model(torch.tensor([[-1, 2]])), "ids"),
    (
        "GPT1 prefix longer than context",
        lambda o: o.model(torch.zeros(1, 5, dtype=torch.long)),
        "n_ctx",
    ),
    ("GPT1 ids not a tensor", lambda o: o.model([[1, 2]]), "ids"),
    # corpus, inference, KV cache, training
    ("tokenizer unknown token", lambda o: o.tokenizer.encode("犬 が 宇宙船"), "宇宙船"),
    (
        "grammar impossible prefix",
        lambda o: o.grammar.true_next_token_distribution(["が", "犬"]),
        "prefix",
    ),
    (
        "next_token temperature 0",
        lambda o: nb.next_token_distribution(o.lm, o.prompt, temperature=0),
        "temperature",
    ),
    (
        "next_token temperature negative",
        lambda o: nb.next_token_distribution(o.lm, o.prompt, temperature=-1.0),
        "temperature",
    ),
    ("next_token top_k 0", lambda o: nb.next_token_distribution(o.lm, o.prompt, top_k=0), "top_k"),
    (
        "next_token id out of range",
        lambda o: nb.next_token_distribution(o.lm, torch.tensor([1, 999])),
        "ids",
    ),
    (
        "next_token prefix longer than context",
        lambda o: nb.next_token_distribution(o.lm, torch.ones(9, dtype=torch.long)),
        "n_ctx",
    ),
    (
        "generate negative max_new_tokens",
        lambda o: nb.generate(o.lm, o.prompt, -1),
        "max_new_tokens",
    ),
    ("generate top_k 0", lambda o: nb.generate(o.lm, o.prompt, 3, top_k=0), "top_k"),
    ("log_likelihood float ids", lambda o: nb.log_likelihood(o.lm, o.prompt.float()), "ids"),
    ("kv cache too long", lambda o: nb.generate_with_cache(o.lm, o.prompt, 10), "max_new_tokens"),
    ("kv cache model type", lambda o: nb.generate_with_cache(o.mha, o.prompt, 2), "model"),
    # device, seeding, plotting, checks, widgets
    ("device unknown", env_device("tpu"), "NBHELPERS_DEVICE"),
    ("seed negative", lambda o: nb.seed_everything(-1), "seed"),
    ("seed float", lambda o: nb.seed_everything(0.5), "seed"),
    ("heatmap rank", lambda o: nb.attention_heatmap(np.ones(3)), "weights"),
    ("heatmap labels", lambda o: nb.attention_heatmap(np.ones((2, 2)), ["a"]), "row_labels"),
    ("check_close shapes", lambda o: nb.check_close("c", torch.zeros(2), torch.zeros(3)), "ours"),
    (
        "explorer scores shape",
        lambda o: nb.AttentionMatrixExplorer(["a", "b"], torch.zeros(3, 3)),
        "scores",
    ),
]


@pytest.fixture(scope="module")
def shared():
    """The objects the bad calls are made on, built once for the whole table."""
    small = nb.GPT1Config(vocab_size=10, n_ctx=4, d_model=8, n_layers=1, n_heads=2)
    grammar = nb.JapaneseGrammar()
    tokenizer = grammar.tokenizer
    lm_config = nb.GPT1Config(
        vocab_size=tokenizer.vocab_size, n_ctx=8, d_model=8, n_layers=1, n_heads=2
    )
    return dict(
        x=torch.randn(4, 8),
        q5=torch.randn(5, 8),
        ids=torch.tensor([[1, 2, 3]]),
        small=small,
        model=nb.GPT1(small),
        mha=nb.MultiHeadAttention(8, 2),
        self_attention=nb.SelfAttention(8, d_k=4),
        grammar=grammar,
        tokenizer=tokenizer,
        lm=nb.GPT1(lm_config),
        prompt=tokenizer.encode("犬 が"),
    )


@pytest.mark.parametrize(("call", "argument"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_bad_call_names_the_argument(call, argument, shared, monkeypatch):
    o = SimpleNamespace(**shared, monkeypatch=monkeypatch)
    with pytest.raises((ValueError, TypeError, RuntimeError)) as error:
        call(o)
    assert isinstance(error.value, (ValueError, TypeError)) or "NBHELPERS_DEVICE" in str(
        error.value
    )
    assert argument in str(error.value), f"message does not name {argument!r}: {error.value}"
