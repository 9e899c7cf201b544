"""What the checkers compare with is right: their references agree with torch, with a
simulation, or with the course's own model; and a module built without the parts an
exercise names is told which part is missing."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from answers import solved
from answers.nb07 import block_class
from nbhelpers.exercises import check_causal_multi_head, check_gpt1_block, check_sample_next_token


@pytest.fixture(scope="module", name="solved")
def solved_fixture():
    return solved()


def test_a_module_without_the_named_layers_is_told_which_one_is_missing():
    class NoOutput(nn.Module):
        def __init__(self, d_model, n_heads):
            super().__init__()
            self.W_QKV = nn.Linear(d_model, 3 * d_model)

        def forward(self, x):
            return x, None

    report = repr(check_causal_multi_head(NoOutput))
    assert "needs an attribute W_O that is an nn.Linear" in report


def test_gpt1_block_without_a_sequential_ffn_is_told_what_to_build():
    class Answer(block_class()):
        def __init__(self, d_model, n_heads, d_ff):
            super().__init__(d_model, n_heads, d_ff)
            self.ffn = nn.Linear(d_model, d_model)

    assert "ffn = nn.Sequential(nn.Linear, nn.GELU, nn.Linear)" in repr(check_gpt1_block(Answer))


def test_the_parameter_count_matches_gpt1_itself(solved):
    from nbhelpers import GPT1, GPT1Config

    config = GPT1Config(vocab_size=41, n_ctx=32, d_model=64, n_layers=2, n_heads=4)
    model = GPT1(config)
    expected = sum(p.numel() for p in model.parameters())  # W_e is one tensor: tied
    assert solved["my_parameter_count"](41, 32, 64, 2, 256) == expected


def test_the_checkers_plain_sgd_is_torchs_sgd():
    from nbhelpers.exercises.references import PlainSGD

    torch.manual_seed(0)
    ours, theirs = nn.Linear(4, 3), nn.Linear(4, 3)
    theirs.load_state_dict(ours.state_dict())
    x = torch.randn(5, 4)
    for model, optimizer in (
        (ours, PlainSGD(ours.parameters(), lr=0.5)),
        (theirs, torch.optim.SGD(theirs.parameters(), lr=0.5)),
    ):
        for _ in range(2):
            optimizer.zero_grad()
            model(x).pow(2).sum().backward()
            optimizer.step()
    for a, b in zip(ours.parameters(), theirs.parameters(), strict=True):
        assert torch.equal(a, b)


def test_a_sampler_that_returns_an_impossible_id_is_named():
    report = repr(check_sample_next_token(lambda logits, T, k, g: len(logits)))
    assert "returned 8, not a token id in [0, 8)" in report


def test_the_cached_masks_reference_is_torchs_lower_right_bias():
    from torch.nn.attention.bias import causal_lower_right

    for n, m in ((1, 5), (3, 5), (4, 4), (2, 7)):
        assert torch.equal(
            causal_lower_right(n, m)._materialize(),
            torch.ones(n, m, dtype=torch.bool).tril(diagonal=m - n),
        )
