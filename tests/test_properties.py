"""Property tests: what must hold for every input, not just the examples we thought of."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st

from nbhelpers import attention, causal_mask, scaled_dot_product_attention, softmax

SETTINGS = settings(max_examples=60, deadline=None)


def output_tolerance(V: torch.Tensor) -> float:
    """Outputs are weighted averages of V's rows, so float32 rounding scales with |V|."""
    return 1e-5 * max(1.0, float(V.abs().max()))


@st.composite
def qkv(draw, same_length=False, batched=None):
    """Random Q (…, n, d_k), K (…, m, d_k), V (…, m, d_v) from a drawn seed."""
    n = draw(st.integers(1, 7))
    m = n if same_length else draw(st.integers(1, 7))
    d_k, d_v = draw(st.integers(1, 9)), draw(st.integers(1, 9))
    batch = draw(st.sampled_from([(), (2,), (2, 3)])) if batched is None else batched
    scale = draw(st.sampled_from([0.1, 1.0, 5.0]))
    generator = torch.Generator().manual_seed(draw(st.integers(0, 2**31)))

    def randn(*shape):
        return torch.randn(*shape, generator=generator) * scale

    return randn(*batch, n, d_k), randn(*batch, m, d_k), randn(*batch, m, d_v)


@SETTINGS
@given(qkv())
def test_weights_are_distributions(tensors):
    Q, K, V = tensors
    _, weights = attention(Q, K, V)
    assert (weights >= 0).all()
    torch.testing.assert_close(weights.sum(-1), torch.ones(weights.shape[:-1]))


@SETTINGS
@given(qkv(same_length=True))
def test_masked_weights_are_exactly_zero(tensors):
    Q, K, V = tensors
    n = Q.shape[-2]
    _, weights = attention(Q, K, V, causal_mask(n))
    assert (weights.triu(diagonal=1) == 0).all()
    torch.testing.assert_close(weights.sum(-1), torch.ones(weights.shape[:-1]))


@SETTINGS
@given(qkv(same_length=True), st.randoms(use_true_random=False))
def test_unmasked_self_attention_is_permutation_equivariant(tensors, rng):
    Q, K, V = tensors
    n = Q.shape[-2]
    order = list(range(n))
    rng.shuffle(order)
    perm = torch.tensor(order)
    out, _ = attention(Q, K, V)
    out_permuted, _ = attention(Q[..., perm, :], K[..., perm, :], V[..., perm, :])
    torch.testing.assert_close(out_permuted, out[..., perm, :], atol=output_tolerance(V), rtol=1e-5)


@SETTINGS
@given(qkv())
def test_agrees_with_torch_sdpa_batched_unbatched_and_cross(tensors):
    Q, K, V = tensors
    reference = F.scaled_dot_product_attention(Q, K, V)
    ours, _ = attention(Q, K, V)
    tolerance = output_tolerance(V)
    torch.testing.assert_close(ours, reference, atol=tolerance, rtol=1e-5)
    torch.testing.assert_close(scaled_dot_product_attention(Q, K, V), reference)


@SETTINGS
@given(qkv(same_length=True))
def test_masked_agrees_with_torch_sdpa_causal(tensors):
    Q, K, V = tensors
    n = Q.shape[-2]
    reference = F.scaled_dot_product_attention(Q, K, V, is_causal=True)
    ours, _ = attention(Q, K, V, causal_mask(n))
    torch.testing.assert_close(ours, reference, atol=output_tolerance(V), rtol=1e-5)


@SETTINGS
@given(
    st.lists(
        st.floats(allow_nan=False, allow_infinity=False, width=32),
        min_size=1,
        max_size=12,
    )
)
def test_stable_softmax_never_gives_nan_on_finite_input(values):
    scores = torch.tensor(values, dtype=torch.float32)
    probabilities = softmax(scores)
    assert torch.isfinite(probabilities).all()
    assert abs(float(probabilities.sum()) - 1.0) < 1e-5
    # exp is monotone: the largest score keeps the largest probability (ties may round equal).
    assert probabilities[scores.argmax()] == probabilities.max()
