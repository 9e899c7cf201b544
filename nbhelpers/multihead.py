"""Multi-head attention: h heads computed in parallel, then Concat(head_1..head_h) W_O.

    head_i = Attention(X W_i^Q, X W_i^K, X W_i^V)
    MultiHead(X) = Concat(head_1, ..., head_h) W_O

The h projections W_i^Q (d_model x d_head each) are stored side by side in one
(d_model x d_model) matrix, so one matmul computes all heads' queries; split_heads then
views the last axis as h x d_head. The parameter count therefore does not depend on h.
"""

from __future__ import annotations

import torch
from torch import nn

from .attention import attention, scaled_dot_product_attention
from .masks import causal_mask
from .validation import check_additive_mask, check_float_tensor


def head_counts(d_model: int) -> list[int]:
    """The numbers of heads that split d_model evenly (its divisors)."""
    return [h for h in range(1, d_model + 1) if d_model % h == 0]


def split_heads(x: torch.Tensor, num_heads: int) -> torch.Tensor:
    """(..., n, d_model) -> (..., h, n, d_head): each head gets its own slice of features."""
    check_float_tensor("x", x)
    d_model = x.shape[-1]
    if isinstance(num_heads, bool) or not isinstance(num_heads, int) or num_heads < 1:
        raise ValueError(f"num_heads must be a positive int, got {num_heads!r}")
    if d_model % num_heads:
        raise ValueError(
            f"d_model={d_model} is not divisible by num_heads={num_heads}; "
            f"head counts that work: {head_counts(d_model)}"
        )
    *batch, n, _ = x.shape
    return x.view(*batch, n, num_heads, d_model // num_heads).transpose(-3, -2)


def merge_heads(x: torch.Tensor) -> torch.Tensor:
    """(..., h, n, d_head) -> (..., n, h * d_head): Concat(head_1, ..., head_h)."""
    check_float_tensor("x", x, min_rank=3)
    *batch, h, n, d_head = x.shape
    return x.transpose(-3, -2).reshape(*batch, n, h * d_head)


class MultiHeadAttention(nn.Module):
    """Multi-head self-attention over x (..., n, d_model), d_head = d_model / num_heads."""

    def __init__(self, d_model: int, num_heads: int, causal: bool = False, bias: bool = True):
        super().__init__()
        for name, value in (("d_model", d_model), ("num_heads", num_heads)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be a positive int, got {value!r}")
        if d_model % num_heads:
            raise ValueError(
                f"d_model={d_model} is not divisible by num_heads={num_heads}; "
                f"head counts that work: {head_counts(d_model)}"
            )
        self.d_model, self.num_heads, self.causal = d_model, num_heads, causal
        self.d_head = d_model // num_heads
        self.W_Q = nn.Linear(d_model, d_model, bias=bias)
        self.W_K = nn.Linear(d_model, d_model, bias=bias)
        self.W_V = nn.Linear(d_model, d_model, bias=bias)
        self.W_O = nn.Linear(d_model, d_model, bias=bias)

    def head_mask(self, x: torch.Tensor, mask: torch.Tensor | None) -> torch.Tensor | None:
        """The additive mask for the (..., h, n, n) scores: the user's mask (n, n), or
        (B, n|1, n) per sentence, gets a head axis; causal adds M."""
        n = x.shape[-2]
        scores_shape = (*x.shape[:-2], self.num_heads, n, n)
        if mask is not None:
            if not isinstance(mask, torch.Tensor):
                raise TypeError(f"mask must be a torch.Tensor or None, got {type(mask).__name__}")
            if mask.dim() >= 3:
                mask = mask.unsqueeze(-3)  # (B, n|1, n) -> (B, 1, n|1, n): same for every head
            check_additive_mask(mask, scores_shape, x.device)
        if self.causal:
            causal = causal_mask(n, device=x.device)
            mask = causal if mask is None else mask + causal
        return mask

    def forward(
        self, x: torch.Tensor, mask: torch.Tensor | None = None, return_weights: bool = False
    ):
        check_float_tensor("x", x)
        if x.shape[-1] != self.d_model:
            raise ValueError(
                f"x must have d_model = {self.d_model} features (last dim), got shape "
                f"{tuple(x.shape)}"
            )
        mask = self.head_mask(x, mask)
        q = split_heads(self.W_Q(x), self.num_heads)  # (..., h, n, d_head)
        k = split_heads(self.W_K(x), self.num_heads)
        v = split_heads(self.W_V(x), self.num_heads)
        if return_weights:
            heads, weights = attention(q, k, v, mask)
            return self.W_O(merge_heads(heads)), weights
        return self.W_O(merge_heads(scaled_dot_product_attention(q, k, v, mask)))

    def extra_repr(self) -> str:
        return (
            f"d_model={self.d_model}, num_heads={self.num_heads}, d_head={self.d_head}, "
            f"causal={self.causal}"
        )
