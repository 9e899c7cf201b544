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
from .support.validation import check_additive_mask, check_float_tensor, check_positive_int


def head_counts(d_model: int) -> list[int]:
    """The numbers of heads that split d_model evenly (its divisors)."""
    check_positive_int("d_model", d_model)
    return [h for h in range(1, d_model + 1) if d_model % h == 0]


def check_divisible(d_model: int, num_heads: int) -> None:
    """d_model must split into num_heads equal slices; say which head counts would work."""
    check_positive_int("d_model", d_model)
    check_positive_int("num_heads", num_heads)
    if d_model % num_heads:
        raise ValueError(
            f"d_model={d_model} is not divisible by num_heads={num_heads} "
            f"({d_model} / {num_heads} = {d_model / num_heads:.4g} features per head); "
            f"head counts that work: {head_counts(d_model)}"
        )


def split_heads(x: torch.Tensor, num_heads: int) -> torch.Tensor:
    """(..., n, d_model) -> (..., h, n, d_head): each head gets its own slice of features."""
    check_float_tensor("x", x)
    check_divisible(x.shape[-1], num_heads)
    *batch, n, d_model = x.shape
    return x.view(*batch, n, num_heads, d_model // num_heads).transpose(-3, -2)


def merge_heads(x: torch.Tensor) -> torch.Tensor:
    """(..., h, n, d_head) -> (..., n, h * d_head): Concat(head_1, ..., head_h)."""
    if isinstance(x, torch.Tensor) and x.dim() < 3:
        raise ValueError(
            f"x must have at least 3 dimensions (..., h heads, n, d_head), got shape "
            f"{tuple(x.shape)}"
        )
    check_float_tensor("x", x, min_rank=3)
    *batch, h, n, d_head = x.shape
    return x.transpose(-3, -2).reshape(*batch, n, h * d_head)


class MultiHeadAttention(nn.Module):
    """Multi-head self-attention over x (..., n, d_model), d_head = d_model / num_heads.

    `mask` is additive (0 allowed, -inf blocked) and may be shared, (n, n); per sentence,
    (B, n|1, n) with x (B, n, d_model), e.g. a padding_mask; or per head, (B, h|1, n|1, n).
    With causal=True the causal mask M is added to it.
    """

    def __init__(self, d_model: int, num_heads: int, causal: bool = False, bias: bool = True):
        super().__init__()
        check_divisible(d_model, num_heads)
        for name, value in (("causal", causal), ("bias", bias)):
            if not isinstance(value, bool):
                raise TypeError(f"{name} must be True or False, got {value!r}")
        self.d_model, self.num_heads, self.causal = d_model, num_heads, causal
        self.d_head = d_model // num_heads
        self.W_Q = nn.Linear(d_model, d_model, bias=bias)
        self.W_K = nn.Linear(d_model, d_model, bias=bias)
        self.W_V = nn.Linear(d_model, d_model, bias=bias)
        self.W_O = nn.Linear(d_model, d_model, bias=bias)

    def head_mask(self, x: torch.Tensor, mask: torch.Tensor | None) -> torch.Tensor | None:
        """The additive mask for the (..., h, n, n) scores, in x's dtype: a per-sentence mask
        (same rank as x) gets a head axis; causal adds M."""
        n = x.shape[-2]
        scores_shape = (*x.shape[:-2], self.num_heads, n, n)
        if mask is not None:
            if not isinstance(mask, torch.Tensor):
                raise TypeError(f"mask must be a torch.Tensor or None, got {type(mask).__name__}")
            given = tuple(mask.shape)
            if mask.dim() >= 3 and mask.dim() == x.dim():
                mask = mask.unsqueeze(-3)  # (B, n|1, n) -> (B, 1, n|1, n): same for every head
            try:
                check_additive_mask(mask, scores_shape, x.device)
            except ValueError as error:
                if "does not broadcast" not in str(error):
                    raise
                raise ValueError(
                    f"mask of shape {given} does not fit x of shape {tuple(x.shape)}: the scores "
                    f"are {scores_shape} (..., h, n queries, n keys); pass a mask of shape "
                    f"(n, n) = ({n}, {n}), one per sentence (..., n|1, n) with x's batch dims, "
                    f"or one per head (..., h|1, n|1, n)"
                ) from None
            mask = mask.to(x.dtype)  # float32 + float16 scores would promote, then fail at @ V
        if self.causal:
            causal = causal_mask(n, device=x.device, dtype=x.dtype)
            mask = causal if mask is None else mask + causal
        return mask

    def _check_input(self, x) -> None:
        check_float_tensor("x", x)
        if x.shape[-1] != self.d_model:
            raise ValueError(
                f"x must have d_model = {self.d_model} features (last dim), got shape "
                f"{tuple(x.shape)}"
            )
        weight = self.W_Q.weight
        if x.dtype != weight.dtype or x.device != weight.device:
            raise ValueError(
                f"x must match the module's parameters: expected dtype {weight.dtype} on "
                f"{weight.device}, got {x.dtype} on {x.device} (use module.to(x.device, "
                f"x.dtype) or x.to(...))"
            )

    def forward(
        self, x: torch.Tensor, mask: torch.Tensor | None = None, return_weights: bool = False
    ):
        """x (..., n, d_model) -> (..., n, d_model); with return_weights also the
        per-head weights (..., h, n, n)."""
        self._check_input(x)
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
