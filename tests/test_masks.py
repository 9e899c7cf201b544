import pytest
import torch
import torch.nn.functional as F

from nbhelpers import (
    MultiHeadAttention,
    attention,
    causal_mask,
    padding_mask,
    scaled_dot_product_attention,
    softmax,
)
from tensors import seeded_randn

randn = seeded_randn(0)


def test_causal_mask_is_zero_on_and_below_the_diagonal_and_minus_inf_above():
    M = causal_mask(4)
    assert torch.equal(M.tril(), torch.zeros(4, 4))
    assert torch.isneginf(M.triu(1)[torch.ones(4, 4).triu(1).bool()]).all()
    assert M.dtype == torch.float32
    assert causal_mask(3, dtype=torch.float16).dtype == torch.float16


def test_causal_mask_with_a_cache_aligns_queries_to_the_last_keys():
    M = causal_mask(2, 5)
    assert torch.isneginf(M).tolist() == [
        [False, False, False, False, True],
        [False, False, False, False, False],
    ]


def test_future_weights_are_exactly_zero_and_rows_sum_to_one():
    Q, K, V = randn(5, 8), randn(5, 8), randn(5, 3)
    _, weights = attention(Q, K, V, causal_mask(5))
    assert torch.all(weights.triu(1) == 0)
    assert torch.allclose(weights.sum(-1), torch.ones(5), atol=1e-6)


def test_changing_a_future_token_leaves_every_earlier_output_unchanged():
    module = MultiHeadAttention(8, 2, causal=True).eval()
    x = randn(6, 8)
    for k in range(6):
        changed = x.clone()
        changed[k] = randn(8) * 10
        with torch.no_grad():
            before, after = module(x), module(changed)
        assert torch.equal(before[:k], after[:k]), f"an output before position {k} changed"
        assert not torch.allclose(before[k:], after[k:])


def test_our_additive_mask_is_sdpas_boolean_mask_flipped():
    Q, K, V = randn(5, 8), randn(5, 8), randn(5, 3)
    may_attend = torch.ones(5, 5, dtype=torch.bool).tril()  # SDPA: True = may attend
    assert torch.equal(causal_mask(5) == 0, may_attend)
    ours, _ = attention(Q, K, V, causal_mask(5))
    sdpa = F.scaled_dot_product_attention(Q, K, V, attn_mask=may_attend)
    assert torch.allclose(ours, sdpa, atol=1e-6)


def test_our_boolean_mask_is_refused_with_the_reason():
    Q = randn(3, 4)
    with pytest.raises(TypeError, match="boolean masks flip meaning"):
        attention(Q, Q, Q, torch.ones(3, 3, dtype=torch.bool))


def test_padding_mask_blocks_padded_keys_per_sentence():
    mask = padding_mask([3, 1], 4)
    assert mask.shape == (2, 1, 4)
    assert torch.isneginf(mask[:, 0]).tolist() == [
        [False, False, False, True],
        [False, True, True, True],
    ]


def test_padding_and_causal_combine_per_sentence():
    mask = causal_mask(4) + padding_mask([3, 2], 4)  # (2, 4, 4)
    assert mask.shape == (2, 4, 4)
    for b, length in enumerate([3, 2]):
        allowed = ~torch.isneginf(mask[b])
        for i in range(4):
            for j in range(4):
                assert allowed[i, j] == (j <= i and j < length)
    Q = randn(2, 4, 8)
    out, weights = attention(Q, Q, Q, mask)
    assert torch.all(weights[~torch.isfinite(mask).expand_as(weights)] == 0)
    reference = F.scaled_dot_product_attention(Q, Q, Q, attn_mask=torch.isfinite(mask))
    assert torch.allclose(out, reference, atol=1e-6)


def test_fully_masked_row_gives_zeros_not_nan():
    Q, V = randn(1, 3, 4), randn(1, 3, 2)
    mask = causal_mask(3) + padding_mask([0], 3)  # sentence of length 0: nothing to see
    out, weights = attention(Q, Q, V, mask)
    assert torch.equal(weights, torch.zeros_like(weights))
    assert torch.equal(out, torch.zeros_like(out))
    fast = scaled_dot_product_attention(Q, Q, V, mask)
    assert torch.equal(fast, torch.zeros_like(fast))
    # d2l-style masked_fill(-1e6) would give uniform weights instead.
    scores = torch.tensor([0.3, -0.2, 1.0])
    uniform = softmax(scores.masked_fill(torch.ones(3, dtype=torch.bool), -1e6))
    assert torch.equal(uniform, torch.full((3,), 1 / 3))


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (lambda: causal_mask(0), ValueError, "n must be a positive int, got 0"),
        (lambda: causal_mask(3, 2), ValueError, "m \\(keys\\) must be >= n.*n=3, m=2"),
        (lambda: causal_mask(2.5), ValueError, "n must be a positive int, got 2.5"),
        (lambda: causal_mask(3, dtype=torch.int64), ValueError, "dtype must be a floating"),
        (lambda: padding_mask([5, 3], 4), ValueError, r"n=4.*lengths\[0\]=5"),
        (lambda: padding_mask([2, -1], 4), ValueError, r"lengths\[1\]=-1"),
        (lambda: padding_mask([[2]], 4), ValueError, "lengths must be a 1-D"),
        (lambda: padding_mask([1.5], 4), ValueError, "lengths must be a 1-D sequence of ints"),
        (lambda: padding_mask([2], 0), ValueError, "n must be a positive int, got 0"),
    ],
)
def test_bad_mask_input_is_named(call, error, message):
    with pytest.raises(error, match=message):
        call()


def test_mask_that_does_not_broadcast_names_both_shapes():
    Q = randn(5, 4)
    with pytest.raises(ValueError, match=r"mask of shape \(4, 4\).*\(5, 5\)"):
        attention(Q, Q, Q, torch.zeros(4, 4))
