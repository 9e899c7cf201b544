"""The public attention API of nbhelpers.attention, against independent PyTorch references."""

import math

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from nbhelpers import (
    SelfAttention,
    attention,
    scaled_dot_product_attention,
    similarity_scores,
    softmax,
)
from nbhelpers.exercises.references import reference_attention

ATOL = 1e-6


def randn(*shape, seed=0, dtype=torch.float32):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed), dtype=dtype)


def qkv(n=4, m=6, d_k=8, d_v=5, batch=()):
    return (
        randn(*batch, n, d_k, seed=1),
        randn(*batch, m, d_k, seed=2),
        randn(*batch, m, d_v, seed=3),
    )


# similarity_scores


def test_similarity_scores_match_a_loop_of_inner_products():
    Q, K = randn(3, 4, seed=1), randn(5, 4, seed=2)
    loop = torch.tensor([[float(Q[i] @ K[j]) for j in range(5)] for i in range(3)])
    torch.testing.assert_close(similarity_scores(Q, K, scale=False), loop, atol=ATOL, rtol=0)
    torch.testing.assert_close(similarity_scores(Q, K), loop / 2.0, atol=ATOL, rtol=0)


def test_similarity_scores_are_batched_and_broadcast():
    Q, K = randn(2, 3, 4, 8, seed=1), randn(3, 6, 8, seed=2)  # K broadcasts over the first dim
    scores = similarity_scores(Q, K)
    assert scores.shape == (2, 3, 4, 6)
    reference = torch.einsum("abid,bjd->abij", Q, K) / math.sqrt(8)
    torch.testing.assert_close(scores, reference, atol=ATOL, rtol=0)


# softmax


def test_softmax_matches_torch_along_any_dim():
    scores = randn(3, 4, 5)
    for dim in (-1, 0, 1, 2):
        torch.testing.assert_close(softmax(scores, dim=dim), F.softmax(scores, dim=dim))


@pytest.mark.parametrize("offset", [1000.0, -1000.0])
def test_softmax_is_stable_at_plus_minus_1000(offset):
    scores = torch.tensor([[0.0, -1.0, -2.0], [3.0, 3.0, 3.0]]) + offset
    weights = softmax(scores)
    assert torch.isfinite(weights).all()
    torch.testing.assert_close(weights, F.softmax(scores - offset, dim=-1), atol=ATOL, rtol=0)


def test_softmax_of_a_fully_masked_row_is_zero_not_nan():
    scores = torch.tensor([[1.0, float("-inf"), 2.0], [float("-inf")] * 3])
    weights = softmax(scores)
    assert not weights.isnan().any()
    assert torch.equal(weights[1], torch.zeros(3))
    assert weights[0, 1] == 0
    torch.testing.assert_close(weights[0], F.softmax(scores[0], dim=-1))


def test_softmax_gradient_is_finite_for_a_fully_masked_row():
    scores = torch.tensor([[1.0, 2.0, 3.0], [float("-inf")] * 3], requires_grad=True)
    (softmax(scores) * torch.arange(3.0)).sum().backward()
    assert torch.isfinite(scores.grad).all()
    assert torch.equal(scores.grad[1], torch.zeros(3))


@pytest.mark.parametrize(
    ("scores", "error", "message"),
    [
        (torch.tensor([1, 2, 3]), ValueError, r"scores must be a floating-point tensor.*int64"),
        (torch.tensor(1.0), ValueError, r"scores must have at least 1 dimensions"),
        ([1.0, 2.0], TypeError, r"scores must be a torch.Tensor, got list"),
        (torch.tensor([1.0, float("nan")]), ValueError, r"scores must be finite or -inf"),
        (torch.tensor([1.0, float("inf")]), ValueError, r"scores must be finite or -inf"),
    ],
)
def test_softmax_bad_input_names_scores(scores, error, message):
    with pytest.raises(error, match=message):
        softmax(scores)


# attention


@pytest.mark.parametrize("batch", [(), (2,), (2, 3)])
@pytest.mark.parametrize(("n", "m"), [(4, 4), (3, 7)])
def test_attention_matches_the_formula(batch, n, m):
    Q, K, V = qkv(n=n, m=m, batch=batch)
    output, weights = attention(Q, K, V)
    assert output.shape == (*batch, n, 5)
    assert weights.shape == (*batch, n, m)
    expected_output, expected_weights = reference_attention(Q, K, V)
    torch.testing.assert_close(output, expected_output, atol=ATOL, rtol=0)
    torch.testing.assert_close(weights, expected_weights, atol=ATOL, rtol=0)
    torch.testing.assert_close(weights.sum(-1), torch.ones(*batch, n), atol=ATOL, rtol=0)


def test_attention_matches_torch_sdpa_with_an_additive_mask():
    Q, K, V = qkv(n=5, m=5, batch=(2,))
    mask = torch.zeros(5, 5).masked_fill(torch.ones(5, 5, dtype=torch.bool).triu(1), -math.inf)
    output, weights = attention(Q, K, V, mask)
    assert torch.equal(weights.triu(1), torch.zeros(2, 5, 5))
    reference = F.scaled_dot_product_attention(Q, K, V, attn_mask=mask)
    torch.testing.assert_close(output, reference, atol=ATOL, rtol=0)


def test_attention_casts_a_float64_mask_to_the_inputs_dtype():
    Q, K, V = qkv(n=3, m=4)
    mask = torch.zeros(3, 4, dtype=torch.float64)
    mask[:, 0] = -math.inf
    output, weights = attention(Q, K, V, mask)
    assert output.dtype == weights.dtype == torch.float32
    torch.testing.assert_close(output, reference_attention(Q, K, V, mask.float())[0])


def test_attention_gives_zeros_for_a_query_that_sees_no_key():
    Q, K, V = qkv(n=3, m=4)
    mask = torch.zeros(3, 4)
    mask[1] = -math.inf
    output, weights = attention(Q, K, V, mask)
    assert torch.equal(output[1], torch.zeros(5))
    assert torch.equal(weights[1], torch.zeros(4))
    assert torch.isfinite(output).all()


# scaled_dot_product_attention (the fast path)


@pytest.mark.parametrize("batch", [(), (2,), (2, 3)])
@pytest.mark.parametrize(("n", "m"), [(4, 4), (3, 7)])
def test_fast_path_matches_attention(batch, n, m):
    Q, K, V = qkv(n=n, m=m, batch=batch)
    torch.testing.assert_close(
        scaled_dot_product_attention(Q, K, V), attention(Q, K, V)[0], atol=ATOL, rtol=0
    )


def test_fast_path_matches_attention_with_a_mask_and_a_blind_query():
    Q, K, V = qkv(n=4, m=4, batch=(2,))
    mask = torch.zeros(4, 4).masked_fill(torch.ones(4, 4, dtype=torch.bool).triu(1), -math.inf)
    mask[2] = -math.inf  # query 2 may see nothing: zeros, not NaN
    fast = scaled_dot_product_attention(Q, K, V, mask)
    assert torch.isfinite(fast).all()
    torch.testing.assert_close(fast, attention(Q, K, V, mask)[0], atol=ATOL, rtol=0)


# SelfAttention


def test_self_attention_projects_then_attends_with_d_k_scaling():
    torch.manual_seed(0)
    layer = SelfAttention(d_model=8, d_k=4, d_v=6).eval()
    X = randn(2, 5, 8)
    output, weights = layer(X, return_weights=True)
    assert output.shape == (2, 5, 6) and weights.shape == (2, 5, 5)
    Q, K, V = layer.W_Q(X), layer.W_K(X), layer.W_V(X)
    assert Q.shape[-1] == K.shape[-1] == 4
    # The scaling uses d_k = 4, not d_model = 8.
    expected = F.softmax(Q @ K.transpose(-2, -1) / math.sqrt(4), dim=-1)
    torch.testing.assert_close(weights, expected, atol=ATOL, rtol=0)
    torch.testing.assert_close(output, F.scaled_dot_product_attention(Q, K, V), atol=ATOL, rtol=0)
    assert torch.equal(layer(X), output)


def test_self_attention_defaults_and_repr():
    layer = SelfAttention(8)
    assert (layer.d_k, layer.d_v) == (8, 8)
    assert SelfAttention(8, d_k=4).d_v == 4
    assert "d_model=8, d_k=8, d_v=8" in repr(layer)
    assert layer(randn(5, 8)).shape == (5, 8)  # unbatched


def test_self_attention_agrees_with_one_head_multihead_attention():
    torch.manual_seed(0)
    d_model = 8
    ours = SelfAttention(d_model).eval()
    theirs = nn.MultiheadAttention(d_model, num_heads=1, batch_first=True).eval()
    with torch.no_grad():
        theirs.in_proj_weight.copy_(torch.cat([ours.W_Q.weight, ours.W_K.weight, ours.W_V.weight]))
        theirs.in_proj_bias.copy_(torch.cat([ours.W_Q.bias, ours.W_K.bias, ours.W_V.bias]))
        theirs.out_proj.weight.copy_(torch.eye(d_model))  # ours has no output projection
        theirs.out_proj.bias.zero_()
    X = randn(2, 5, d_model)
    mask = torch.zeros(5, 5).masked_fill(torch.ones(5, 5, dtype=torch.bool).triu(1), -math.inf)
    for m in (None, mask):
        output, weights = ours(X, m, return_weights=True)
        expected, expected_weights = theirs(X, X, X, attn_mask=m, need_weights=True)
        torch.testing.assert_close(output, expected, atol=ATOL, rtol=0)
        torch.testing.assert_close(weights, expected_weights, atol=ATOL, rtol=0)


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"d_model": 0}, "d_model"),
        ({"d_model": 8.0}, "d_model"),
        ({"d_model": True}, "d_model"),
        ({"d_model": 8, "d_k": -1}, "d_k"),
        ({"d_model": 8, "d_v": 0}, "d_v"),
    ],
)
def test_self_attention_rejects_bad_sizes(kwargs, name):
    with pytest.raises(ValueError, match=rf"{name} must be a positive int"):
        SelfAttention(**kwargs)


def test_self_attention_rejects_bad_input():
    layer = SelfAttention(8)
    with pytest.raises(ValueError, match=r"X must have d_model = 8 features.*\(5, 6\)"):
        layer(randn(5, 6))
    with pytest.raises(ValueError, match=r"X must be a floating-point tensor"):
        layer(torch.ones(5, 8, dtype=torch.long))
    with pytest.raises(ValueError, match=r"X must have at least 2 dimensions.*\(8,\)"):
        layer(randn(8))


# bad input: every case of the issue, for every entry point

ENTRY_POINTS = {
    "attention": lambda Q, K, V, mask=None: attention(Q, K, V, mask),
    "scaled_dot_product_attention": scaled_dot_product_attention,
}


@pytest.mark.parametrize("entry", ENTRY_POINTS)
@pytest.mark.parametrize(
    ("make", "error", "message"),
    [
        (
            lambda: (randn(4, 8), randn(6, 7), randn(6, 5)),
            ValueError,
            r"Q and K must have the same feature size d_k.*Q \(4, 8\) and K \(6, 7\)",
        ),
        (
            lambda: (randn(4, 8), randn(6, 8), randn(5, 5)),
            ValueError,
            r"K and V must have the same length m.*K \(6, 8\) and V \(5, 5\)",
        ),
        (
            lambda: (randn(8), randn(6, 8), randn(6, 5)),
            ValueError,
            r"Q must have at least 2 dimensions.*\(8,\)",
        ),
        (
            lambda: (randn(4, 8), randn(6, 8), randn(5)),
            ValueError,
            r"V must have at least 2 dimensions.*\(5,\)",
        ),
        (
            lambda: (torch.ones(4, 8, dtype=torch.long), randn(6, 8), randn(6, 5)),
            ValueError,
            r"Q must be a floating-point tensor.*torch.int64",
        ),
        (
            lambda: (randn(4, 8), torch.ones(6, 8, dtype=torch.int32), randn(6, 5)),
            ValueError,
            r"K must be a floating-point tensor.*torch.int32",
        ),
        (
            lambda: (randn(4, 8), randn(6, 8), torch.ones(6, 5, dtype=torch.int64)),
            ValueError,
            r"V must be a floating-point tensor",
        ),
        (
            lambda: (randn(4, 8), randn(6, 8, dtype=torch.float64), randn(6, 5)),
            ValueError,
            r"Q, K and V must have one dtype.*float32.*float64",
        ),
        (
            lambda: (randn(2, 4, 8), randn(3, 6, 8), randn(3, 6, 5)),
            ValueError,
            r"batch dimensions of Q, K and V must broadcast",
        ),
        (
            lambda: (randn(4, 8), randn(6, 8), torch.empty(6, 5, device="meta")),
            ValueError,
            r"one device.*V on meta",
        ),
        (
            lambda: ([[1.0] * 8] * 4, randn(6, 8), randn(6, 5)),
            TypeError,
            r"Q must be a torch.Tensor, got list",
        ),
    ],
    ids=[
        "d_k-differs",
        "K-V-lengths-differ",
        "Q-rank-1",
        "V-rank-1",
        "Q-int64",
        "K-int32",
        "V-int64",
        "mixed-dtypes",
        "batch-dims-clash",
        "devices-differ",
        "Q-not-a-tensor",
    ],
)
def test_bad_qkv_names_the_argument_and_shapes(entry, make, error, message):
    with pytest.raises(error, match=message):
        ENTRY_POINTS[entry](*make())


@pytest.mark.parametrize("entry", ENTRY_POINTS)
@pytest.mark.parametrize(
    ("mask", "error", "message"),
    [
        (torch.zeros(4, 5), ValueError, r"mask of shape \(4, 5\) does not broadcast.*\(4, 6\)"),
        (torch.zeros(3, 4, 6), ValueError, r"mask of shape \(3, 4, 6\) does not broadcast"),
        (torch.zeros(4, 6, dtype=torch.bool), TypeError, r"mask must be additive.*boolean"),
        (torch.zeros(4, 6, dtype=torch.long), ValueError, r"mask must be a floating-point"),
        (torch.full((4, 6), math.inf), ValueError, r"mask may hold only finite values and -inf"),
        (torch.full((4, 6), math.nan), ValueError, r"mask may hold only finite values and -inf"),
        ([[0.0] * 6] * 4, TypeError, r"mask must be a torch.Tensor or None, got list"),
        (torch.zeros(4, 6, device="meta"), ValueError, r"mask must be on cpu"),
    ],
    ids=["wrong-m", "batch-clash", "bool", "int64", "plus-inf", "nan", "list", "device"],
)
def test_bad_mask_names_the_mask_and_shapes(entry, mask, error, message):
    Q, K, V = qkv(n=4, m=6)
    with pytest.raises(error, match=message):
        ENTRY_POINTS[entry](Q, K, V, mask)


def test_similarity_scores_bad_input_names_the_argument():
    with pytest.raises(ValueError, match=r"Q and K must have the same feature size"):
        similarity_scores(randn(4, 8), randn(6, 7))
    with pytest.raises(ValueError, match=r"K must be a floating-point tensor"):
        similarity_scores(randn(4, 8), torch.ones(6, 8, dtype=torch.long))
    with pytest.raises(ValueError, match=r"K must have at least 2 dimensions"):
        similarity_scores(randn(4, 8), randn(8))
