"""Scaled dot-product attention, from scratch, one formula per function.

    s_ij = q_i · k_j / sqrt(d_k)                       similarity_scores
    a_ij = exp(s_ij) / sum_j' exp(s_ij')               softmax
    o_i  = sum_j a_ij v_j                              (weights @ V)
    Attention(Q, K, V) = softmax(Q Kᵀ / sqrt(d_k) + M) V      attention

Shapes: Q (..., n, d_k), K (..., m, d_k), V (..., m, d_v); n queries may differ from m keys,
but every key has exactly one value. M is an additive mask (0 allowed, -inf blocked).
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

from .support.language import tr
from .support.validation import (
    check_additive_mask,
    check_float_tensor,
    check_positive_int,
    check_qkv,
    checked,
    checking,
)


def similarity_scores(Q: torch.Tensor, K: torch.Tensor, scale: bool = True) -> torch.Tensor:
    """All inner products q_i · k_j at once: (..., n, m), divided by sqrt(d_k) when scaled.

    Without the scaling, the variance of q · k grows like d_k for unit-variance entries, and
    softmax saturates towards one-hot.

    Notebook 01.
    """
    if checking():
        check_qkv(Q, K)
    scores = Q @ K.transpose(-2, -1)  # (..., n, d_k) @ (..., d_k, m) -> (..., n, m)
    if scale:
        scores = scores / math.sqrt(Q.shape[-1])
    return scores


def softmax(scores: torch.Tensor, dim: int = -1) -> torch.Tensor:
    """exp(s_ij) / Σ_j exp(s_ij), computed stably.

    Subtracting the row maximum changes nothing mathematically (softmax ignores a constant
    shift) but keeps exp() from overflowing. A row that is entirely -inf (every key masked)
    gets weight 0 everywhere instead of 0/0 = NaN.

    Notebook 02.
    """
    if checking():
        check_float_tensor("scores", scores, min_rank=1)
        if torch.isnan(scores).any() or torch.isposinf(scores).any():
            raise ValueError(
                tr(
                    "scores must be finite or -inf (masked), but they hold NaN or +inf",
                )
            )
    row_max = scores.amax(dim=dim, keepdim=True)
    row_max = torch.where(torch.isneginf(row_max), torch.zeros_like(row_max), row_max)
    exps = torch.exp(scores - row_max)
    total = exps.sum(dim=dim, keepdim=True)
    return exps / torch.where(total > 0, total, torch.ones_like(total))


def scores_shape(Q: torch.Tensor, K: torch.Tensor) -> tuple[int, ...]:
    """The shape of Q Kᵀ: the batch dims broadcast, then (n, m)."""
    return (*torch.broadcast_shapes(Q.shape[:-2], K.shape[:-2]), Q.shape[-2], K.shape[-2])


def attention(
    Q: torch.Tensor, K: torch.Tensor, V: torch.Tensor, mask: torch.Tensor | None = None
) -> tuple[torch.Tensor, torch.Tensor]:
    """softmax(Q Kᵀ / sqrt(d_k) + M) V; returns (output (..., n, d_v), weights (..., n, m)).

    Notebook 03.
    """
    if checking():
        check_qkv(Q, K, V)
        if mask is not None:
            check_additive_mask(mask, scores_shape(Q, K), Q.device)
    with checked():
        scores = similarity_scores(Q, K)  # (..., n, m)
        if mask is not None:
            scores = scores + mask.to(scores.dtype)  # a float64 mask must not promote them
        weights = softmax(scores)
    return weights @ V, weights  # (..., n, m) @ (..., m, d_v) -> (..., n, d_v)


def scaled_dot_product_attention(
    Q: torch.Tensor,
    K: torch.Tensor,
    V: torch.Tensor,
    mask: torch.Tensor | None = None,
    *,
    is_causal: bool = False,
    dropout_p: float = 0.0,
) -> torch.Tensor:
    """The fast path: the same output as `attention`, computed by torch's fused kernels
    (flash or memory-efficient on a GPU), without materialising the weights for us; with
    dropout on the weights while training (`dropout_p`). No step of it waits for the device.

    `is_causal=True` applies the causal mask M inside the kernel (n = m), without building
    it: on a GPU only that form reaches the flash kernel, which rejects an explicit mask.

    Notebooks 03, 09 and 10.
    """
    if checking():
        check_qkv(Q, K, V)
        if mask is not None and is_causal:
            raise ValueError(
                tr(
                    "pass either mask (add causal_mask(n) to it) or is_causal=True, not both",
                )
            )
        if mask is not None:
            check_additive_mask(mask, scores_shape(Q, K), Q.device)
    if mask is None:
        return F.scaled_dot_product_attention(Q, K, V, is_causal=is_causal, dropout_p=dropout_p)
    output = F.scaled_dot_product_attention(
        Q, K, V, attn_mask=mask.to(Q.dtype), dropout_p=dropout_p
    )
    # A query that may see no key gets NaN or zeros depending on torch's version and kernel;
    # match `attention`, which always gives zeros.
    return output.masked_fill(torch.isneginf(mask.amax(dim=-1, keepdim=True)), 0.0)


class SelfAttention(nn.Module):
    """One attention head over a sequence X (..., n, d_model).

    Q = X W_Q, K = X W_K, V = X W_V, then attention(Q, K, V). The scaling uses d_k, the size
    of the projected queries and keys, not d_model: the two differ as soon as heads split
    d_model (d_k = d_model / h).

    Notebook 03.
    """

    def __init__(
        self, d_model: int, d_k: int | None = None, d_v: int | None = None, bias: bool = True
    ):
        super().__init__()
        for name, value in (("d_model", d_model), ("d_k", d_k), ("d_v", d_v)):
            if value is not None:
                check_positive_int(name, value)
        self.d_model = d_model
        self.d_k = d_k or d_model
        self.d_v = d_v or self.d_k
        self.W_Q = nn.Linear(d_model, self.d_k, bias=bias)
        self.W_K = nn.Linear(d_model, self.d_k, bias=bias)
        self.W_V = nn.Linear(d_model, self.d_v, bias=bias)

    def forward(
        self, X: torch.Tensor, mask: torch.Tensor | None = None, return_weights: bool = False
    ):
        check_float_tensor("X", X)
        if X.shape[-1] != self.d_model:
            raise ValueError(
                tr(
                    "X must have d_model = {d_model} features (last dim), got shape {X_shape}",
                    d_model=self.d_model,
                    X_shape=tuple(X.shape),
                )
            )
        output, weights = attention(self.W_Q(X), self.W_K(X), self.W_V(X), mask)
        return (output, weights) if return_weights else output

    def extra_repr(self) -> str:
        return f"d_model={self.d_model}, d_k={self.d_k}, d_v={self.d_v}"
