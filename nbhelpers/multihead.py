"""Multi-head attention: n_h heads computed in parallel, then Concat(head_0..head_{n_h-1}) W_O.

    head_r = Attention(X W_r^Q, X W_r^K, X W_r^V)
    MultiHead(X) = Concat(head_0, ..., head_{n_h-1}) W_O

The n_h projections W_r^Q (d_model x d_head each) are stored side by side in one
(d_model x d_model) matrix, so one matmul computes all heads' queries; split_heads then
views the last axis as n_h x d_head. The parameter count therefore does not depend on n_h.
"""

from __future__ import annotations

import contextlib

import torch
import torch.nn.functional as F
from torch import nn

from .attention import attention, scaled_dot_product_attention
from .masks import causal_mask
from .support.language import tr
from .support.validation import (
    check_additive_mask,
    check_float_tensor,
    check_positive_int,
    check_probability,
    checked,
    checking,
)


def head_counts(d_model: int) -> list[int]:
    """The numbers of heads that split d_model evenly (its divisors).

    Notebook 05.
    """
    check_positive_int("d_model", d_model)
    return [n_h for n_h in range(1, d_model + 1) if d_model % n_h == 0]


def check_divisible(d_model: int, n_heads: int) -> None:
    """d_model must split into n_heads equal slices; say which head counts would work."""
    check_positive_int("d_model", d_model)
    check_positive_int("n_heads", n_heads)
    if d_model % n_heads:
        raise ValueError(
            tr(
                "d_model={d_model} is not divisible by n_heads={n_heads} ({d_model} / "
                "{n_heads} = {per_head:.4g} features per head); head counts that work: "
                "{divisors}",
                d_model=d_model,
                n_heads=n_heads,
                per_head=d_model / n_heads,
                divisors=head_counts(d_model),
            )
        )


def split_heads(x: torch.Tensor, n_heads: int) -> torch.Tensor:
    """(..., n, d_model) -> (..., n_h, n, d_head): each head gets its own slice of features.

    Notebook 05.
    """
    if checking():
        check_float_tensor("x", x)
        check_divisible(x.shape[-1], n_heads)
    *batch, n, d_model = x.shape
    # (..., n, d_model) -> (..., n, n_h, d_head) -> (..., n_h, n, d_head)
    return x.view(*batch, n, n_heads, d_model // n_heads).transpose(-3, -2)


def merge_heads(x: torch.Tensor) -> torch.Tensor:
    """(..., n_h, n, d_head) -> (..., n, n_h * d_head): Concat(head_0, ..., head_{n_h-1}).

    Notebook 05.
    """
    if checking():
        if isinstance(x, torch.Tensor) and x.dim() < 3:
            raise ValueError(
                tr(
                    "x must have at least 3 dimensions (..., n_h heads, n, d_head), got shape "
                    "{x_shape}",
                    x_shape=tuple(x.shape),
                )
            )
        check_float_tensor("x", x, min_rank=3)
    *batch, n_h, n, d_head = x.shape
    # (..., n_h, n, d_head) -> (..., n, n_h, d_head) -> (..., n, n_h * d_head)
    return x.transpose(-3, -2).reshape(*batch, n, n_h * d_head)


class MultiHeadAttention(nn.Module):
    """Multi-head self-attention over x (..., n, d_model), d_head = d_model / n_heads.

    `mask` is additive (0 allowed, -inf blocked) and may be shared, (n, n); per sentence,
    (B, n|1, n) with x (B, n, d_model), e.g. a padding_mask; or per head, (B, n_h|1, n|1, n).
    With causal=True the causal mask M applies too; with no other mask it is left to the
    kernel (`is_causal=True`), so no (n, n) tensor is built and a GPU can use flash.

    Notebook 05.
    """

    def __init__(
        self,
        d_model: int,
        n_heads: int,
        causal: bool = False,
        bias: bool = True,
        dropout: float = 0.0,
    ):
        super().__init__()
        check_divisible(d_model, n_heads)
        for name, value in (("causal", causal), ("bias", bias)):
            if not isinstance(value, bool):
                raise TypeError(
                    tr(
                        "{name} must be True or False, got {value!r}",
                        name=name,
                        value=value,
                    )
                )
        check_probability("dropout", dropout)
        self.d_model, self.n_heads, self.causal = d_model, n_heads, causal
        self.dropout = dropout  # on the attention weights while training, as in GPT-1
        self.d_head = d_model // n_heads
        self.W_Q = nn.Linear(d_model, d_model, bias=bias)
        self.W_K = nn.Linear(d_model, d_model, bias=bias)
        self.W_V = nn.Linear(d_model, d_model, bias=bias)
        self.W_O = nn.Linear(d_model, d_model, bias=bias)

    def forward(
        self,
        x: torch.Tensor,
        mask: torch.Tensor | None = None,
        return_weights: bool = False,
        *,
        cache=None,
        start: int = 0,
        causal: bool | None = None,
    ):
        """x (..., n, d_model) -> (..., n, d_model); with return_weights also the per-head
        weights (..., n_h, n, m). `causal` overrides the module's own setting for this call
        (None keeps it): an explorer shows what the mask prevents without touching the
        model.

        With a `cache` (one layer of a KVCache), x holds the tokens at positions
        start .. start+n-1: their keys and values are stored, and the queries attend to all
        m = start + n positions so far. The arguments are checked here, unless the public
        entry that runs this layer (GPT1.forward, generate) checked its own already.
        """
        if checking():
            self.check_input(x)
            self.check_mask(x, mask, start + x.shape[-2])
        with checked():
            mask = self.per_head(x, mask)
            q = split_heads(self.W_Q(x), self.n_heads)  # (..., n_h, n, d_head)
            k = split_heads(self.W_K(x), self.n_heads)
            v = split_heads(self.W_V(x), self.n_heads)
            if cache is not None:
                k, v = cache.store(start, k, v)  # every position so far: (..., n_h, m, d_head)
            n, m = q.shape[-2], k.shape[-2]
            causal = (self.causal if causal is None else causal) and n > 1  # one new query: all
            if causal and (mask is not None or return_weights or n != m):
                # The kernel's is_causal aligns the queries top-left; cached queries are the
                # *last* n of m positions, and a mask of our own must be combined with M.
                M = causal_mask(n, m, device=x.device, dtype=x.dtype)
                mask, causal = (M if mask is None else mask + M), False
            p = self.dropout if self.training else 0.0
            if return_weights:
                heads, weights = attention(q, k, v, mask)  # (..., n_h, n, d_head), (..., n_h, n, m)
                if p:
                    weights = F.dropout(weights, p)
                    heads = weights @ v
                return self.W_O(merge_heads(heads)), weights  # (..., n, d_model)
            heads = scaled_dot_product_attention(q, k, v, mask, is_causal=causal, dropout_p=p)
            return self.W_O(merge_heads(heads))  # Concat(head_0 .. head_{n_h-1}) W_O

    def per_head(self, x, mask) -> torch.Tensor | None:
        """The mask for the (..., n_h, n, m) scores, in x's dtype: a per-sentence mask (same
        rank as x) gets a head axis."""
        if mask is None:
            return None
        # x's dtype: float32 + float16 scores would promote, then fail at @ V.
        return self.with_head_axis(x, mask).to(x.dtype)

    @staticmethod
    def with_head_axis(x, mask) -> torch.Tensor:
        """A per-sentence mask (B, n|1, m), of x's rank, as (B, 1, n|1, m): the same for every
        head. Any other mask as it is."""
        return mask.unsqueeze(-3) if 3 <= mask.dim() == x.dim() else mask

    def check_mask(self, x, mask, keys: int) -> None:
        """A mask that fits the (..., n_h, n, keys) scores of x, in every way per_head accepts."""
        if mask is None:
            return
        if not isinstance(mask, torch.Tensor):
            raise TypeError(
                tr(
                    "mask must be a torch.Tensor or None, got {got_type}",
                    got_type=type(mask).__name__,
                )
            )
        n = x.shape[-2]
        scores_shape = (*x.shape[:-2], self.n_heads, n, keys)
        shape_error = tr(
            "mask of shape {given} does not fit x of shape {x_shape}: the scores "
            "are {scores_shape} (..., n_h, n queries, m keys); pass a mask of shape "
            "(n, m) = ({n}, {keys}), one per sentence (..., n|1, m) with x's batch "
            "dims, or one per head (..., n_h|1, n|1, m)",
            given=tuple(mask.shape),
            x_shape=tuple(x.shape),
            scores_shape=scores_shape,
            n=n,
            keys=keys,
        )
        check_additive_mask(
            self.with_head_axis(x, mask), scores_shape, x.device, shape_error=shape_error
        )

    def check_input(self, x) -> None:
        check_float_tensor("x", x)
        if x.shape[-1] != self.d_model:
            raise ValueError(
                tr(
                    "x must have d_model = {d_model} features (last dim), got shape {x_shape}",
                    d_model=self.d_model,
                    x_shape=tuple(x.shape),
                )
            )
        weight = self.W_Q.weight
        if x.dtype != weight.dtype or x.device != weight.device:
            raise ValueError(
                tr(
                    "x must match the module's parameters: expected dtype {dtype} on "
                    "{device}, got {x_dtype} on {x_device} (use module.to(x.device, x.dtype) "
                    "or x.to(...))",
                    dtype=weight.dtype,
                    device=weight.device,
                    x_dtype=x.dtype,
                    x_device=x.device,
                )
            )

    def extra_repr(self) -> str:
        return (
            f"d_model={self.d_model}, n_heads={self.n_heads}, d_head={self.d_head}, "
            f"causal={self.causal}" + (f", dropout={self.dropout}" if self.dropout else "")
        )


@contextlib.contextmanager
def head_removed(attn: MultiHeadAttention, head: int):
    """Inside the `with`, `attn` runs with head `head`'s output zeroed before W_O: what the
    model computes without that head (an ablation). Notebook 00."""
    if not isinstance(head, int) or not 0 <= head < attn.n_heads:
        raise ValueError(
            tr(
                "head must be a head's index, 0 to {last}, got {head!r}",
                last=attn.n_heads - 1,
                head=head,
            )
        )
    columns = slice(head * attn.d_head, (head + 1) * attn.d_head)

    def zeroed(module, args):
        concat = args[0].clone()  # (..., n, n_h * d_head): Concat(head_0 .. head_{n_h-1})
        concat[..., columns] = 0
        return (concat, *args[1:])

    handle = attn.W_O.register_forward_pre_hook(zeroed)
    try:
        yield attn
    finally:
        handle.remove()
