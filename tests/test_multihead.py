import pytest
import torch

from nbhelpers import (
    MultiHeadAttention,
    attention,
    causal_mask,
    head_counts,
    merge_heads,
    padding_mask,
    split_heads,
)
from tensors import copy_to_torch, seeded_randn

randn = seeded_randn(0)


def test_split_then_merge_is_the_identity_and_shapes_are_as_documented():
    x = randn(2, 5, 12)
    heads = split_heads(x, 3)
    assert heads.shape == (2, 3, 5, 4)
    assert torch.equal(heads[:, 1], x[..., 4:8])  # head 1 (from 0) owns features 4..7
    assert torch.equal(merge_heads(heads), x)


def test_head_counts_are_the_divisors():
    assert head_counts(12) == [1, 2, 3, 4, 6, 12]
    assert head_counts(1) == [1]


def loop_over_heads(module, x, mask=None):
    """Each head separately, with its own slice of the projections, then Concat and W_O."""
    d = module.d_head
    heads = []
    for i in range(module.n_heads):
        rows = slice(i * d, (i + 1) * d)
        q = x @ module.W_Q.weight[rows].T + module.W_Q.bias[rows]
        k = x @ module.W_K.weight[rows].T + module.W_K.bias[rows]
        v = x @ module.W_V.weight[rows].T + module.W_V.bias[rows]
        heads.append(attention(q, k, v, mask)[0])
    return module.W_O(torch.cat(heads, dim=-1))


@pytest.mark.parametrize("n_heads", [1, 2, 4, 8])
@pytest.mark.parametrize("causal", [False, True])
def test_fused_equals_a_loop_over_separate_heads(n_heads, causal):
    module = MultiHeadAttention(8, n_heads, causal=causal)
    x = randn(5, 8)
    with torch.no_grad():
        fused = module(x)
        looped = loop_over_heads(module, x, causal_mask(5) if causal else None)
    assert torch.allclose(fused, looped, atol=1e-6)


@pytest.mark.parametrize("n_heads", [1, 2, 4])
def test_equals_nn_multihead_attention_with_copied_weights(n_heads):
    module = MultiHeadAttention(8, n_heads, causal=True).eval()
    reference = copy_to_torch(module)
    x = randn(3, 5, 8)
    blocked = torch.ones(5, 5, dtype=torch.bool).triu(1)  # nn.MultiheadAttention: True = blocked
    with torch.no_grad():
        ours, weights = module(x, return_weights=True)
        theirs, their_weights = reference(
            x, x, x, attn_mask=blocked, need_weights=True, average_attn_weights=False
        )
    assert (ours - theirs).abs().max() <= 1e-6
    assert (weights - their_weights).abs().max() <= 1e-6


def test_padding_mask_matches_key_padding_mask():
    module = MultiHeadAttention(8, 2).eval()
    reference = copy_to_torch(module)
    x = randn(2, 4, 8)
    lengths = [4, 2]
    with torch.no_grad():
        ours = module(x, mask=padding_mask(lengths, 4))
        theirs, _ = reference(
            x, x, x, key_padding_mask=torch.arange(4)[None] >= torch.tensor(lengths)[:, None]
        )
    assert (ours - theirs).abs().max() <= 1e-6


def test_weights_path_and_fast_path_agree_with_padding_and_causal():
    module = MultiHeadAttention(8, 4, causal=True).eval()
    x = randn(2, 4, 8)
    mask = padding_mask([4, 0], 4)  # the second sentence is all padding
    with torch.no_grad():
        fast = module(x, mask=mask)
        slow, weights = module(x, mask=mask, return_weights=True)
    assert torch.allclose(fast, slow, atol=1e-6)
    assert not fast.isnan().any()
    assert torch.equal(weights[1], torch.zeros_like(weights[1]))


def test_parameter_count_does_not_depend_on_the_number_of_heads():
    counts = {
        h: sum(p.numel() for p in MultiHeadAttention(12, h).parameters())
        for h in (1, 2, 3, 4, 6, 12)
    }
    assert set(counts.values()) == {4 * 12 * 12 + 4 * 12}


def test_float16_input_with_a_float32_mask_works():
    module = MultiHeadAttention(8, 2).half()
    x = randn(2, 4, 8).half()
    out = module(x, mask=padding_mask([4, 3], 4))
    assert out.dtype == torch.float16 and not out.isnan().any()


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (
            lambda: MultiHeadAttention(10, 4),
            ValueError,
            r"d_model=10.*n_heads=4.*\[1, 2, 5, 10\]",
        ),
        (
            lambda: split_heads(randn(3, 10), 3),
            ValueError,
            r"d_model=10.*n_heads=3.*\[1, 2, 5, 10\]",
        ),
        (lambda: MultiHeadAttention(8, 0), ValueError, "n_heads must be a positive int, got 0"),
        (lambda: MultiHeadAttention(8, 2.0), ValueError, "n_heads must be a positive int"),
        (lambda: MultiHeadAttention(8, 2, causal=1), TypeError, "causal must be True or False"),
        (lambda: head_counts(0), ValueError, "d_model must be a positive int, got 0"),
        (lambda: merge_heads(randn(4, 8)), ValueError, r"at least 3 dimensions.*\(4, 8\)"),
        (lambda: split_heads(torch.ones(3, 4, dtype=torch.long), 2), ValueError, "floating"),
    ],
)
def test_bad_arguments_are_named(call, error, message):
    with pytest.raises(error, match=message):
        call()


@pytest.mark.parametrize(
    ("x_shape", "mask", "message"),
    [
        ((5, 8), torch.zeros(4, 4), r"mask of shape \(4, 4\) does not fit x of shape \(5, 8\)"),
        ((2, 5, 8), torch.zeros(3, 5, 5), r"mask of shape \(3, 5, 5\).*\(2, 2, 5, 5\)"),
        ((2, 5, 8), torch.zeros(2, 1, 4), r"\(n, m\) = \(5, 5\)"),
        ((5, 8), torch.zeros(5, 5, dtype=torch.bool), "boolean masks flip meaning"),
        ((5, 7), None, r"d_model = 8 features.*\(5, 7\)"),
        ((5, 8), torch.full((5, 5), float("nan")), "NaN or \\+inf"),
    ],
)
def test_bad_forward_input_is_named(x_shape, mask, message):
    module = MultiHeadAttention(8, 2)
    with pytest.raises((ValueError, TypeError), match=message):
        module(randn(*x_shape), mask=mask)


def test_dtype_mismatch_is_named():
    with pytest.raises(ValueError, match="expected dtype torch.float32.*got torch.float64"):
        MultiHeadAttention(8, 2)(randn(5, 8).double())


def test_head_removed_zeroes_exactly_that_heads_slice_of_the_concat():
    from nbhelpers.multihead import head_removed, merge_heads, split_heads

    torch.manual_seed(0)
    attn = MultiHeadAttention(8, 4, causal=True).eval()
    x = torch.randn(2, 5, 8)
    with torch.no_grad():
        q, k, v = (split_heads(w(x), 4) for w in (attn.W_Q, attn.W_K, attn.W_V))
        n = x.shape[-2]
        mask = torch.full((n, n), float("-inf")).triu(1)
        heads = torch.softmax(q @ k.mT / 2**0.5 + mask, -1) @ v  # (2, 4, 5, 2)
        heads[:, 1] = 0
        expected = attn.W_O(merge_heads(heads))
        with head_removed(attn, 1):
            got = attn(x)
        after = attn(x)
    torch.testing.assert_close(got, expected)
    assert not torch.allclose(after, expected)  # the hook is gone after the with
    with pytest.raises(ValueError, match="0 to 3, got 4"):
        with head_removed(attn, 4):
            pass
