"""Masks in the additive form of the theory: 0 where a key may be attended, -inf where not.

Additive masks are added to the scores before softmax, so they mean the same thing in every
API. Boolean masks do not: in F.scaled_dot_product_attention True means "may attend", while
Tensor.masked_fill and nn.MultiheadAttention use True for "blocked". Convert a boolean mask
with `torch.zeros(shape).masked_fill(blocked, float("-inf"))` and the question never arises.
"""

from __future__ import annotations

import torch

from .support.language import tr
from .support.validation import check_positive_int


def causal_mask(
    n: int, m: int | None = None, device=None, *, dtype: torch.dtype = torch.float32
) -> torch.Tensor:
    """The mask matrix M (n, m): M_ij = 0 for j <= i, -inf for j > i (no looking ahead).

    With m > n keys (a cache of earlier tokens), the n queries are the *last* n positions, so
    query i may see keys j <= i + (m - n) (torch calls this "lower-right" alignment).

    Notebook 04.
    """
    m = n if m is None else m
    check_positive_int("n", n)
    check_positive_int("m", m)
    if m < n:
        raise ValueError(
            tr(
                "m (keys) must be >= n (queries) for a causal mask, got n={n}, m={m}",
                n=n,
                m=m,
            )
        )
    if not dtype.is_floating_point:
        raise ValueError(
            tr(
                "dtype must be a floating-point dtype (to hold -inf), got {dtype}",
                dtype=dtype,
            )
        )
    blocked = torch.ones(n, m, dtype=torch.bool, device=device).triu(diagonal=m - n + 1)
    return torch.zeros(n, m, dtype=dtype, device=device).masked_fill(blocked, float("-inf"))


def padding_mask(
    lengths, n: int, device=None, *, dtype: torch.dtype = torch.float32
) -> torch.Tensor:
    """Key-padding mask for a batch of sentences padded to length n: shape (B, 1, n).

    Sentence b has lengths[b] real tokens; keys j >= lengths[b] are padding and get -inf.
    The middle axis of size 1 broadcasts over the queries, so `causal_mask(n) +
    padding_mask(lengths, n)` gives each sentence its own (n, n) mask. A sentence of length 0
    leaves its queries nothing to see; nbhelpers' attention gives such rows zero weights.

    Notebook 04.
    """
    check_positive_int("n", n)
    if not dtype.is_floating_point:
        raise ValueError(
            tr(
                "dtype must be a floating-point dtype (to hold -inf), got {dtype}",
                dtype=dtype,
            )
        )
    lengths = torch.as_tensor(lengths, device=device)
    if lengths.dim() != 1 or lengths.is_floating_point() or lengths.dtype == torch.bool:
        raise ValueError(
            tr(
                "lengths must be a 1-D sequence of ints (one per sentence), got "
                "{dtype} of shape {lengths_shape}",
                dtype=lengths.dtype,
                lengths_shape=tuple(lengths.shape),
            )
        )
    bad = [(b, int(length)) for b, length in enumerate(lengths.tolist()) if not 0 <= length <= n]
    if bad:
        found = ", ".join(f"lengths[{b}]={length}" for b, length in bad)
        raise ValueError(
            tr(
                "every length must lie in [0, n] with n={n} (the padded length), got {found}",
                n=n,
                found=found,
            )
        )
    positions = torch.arange(n, device=lengths.device)
    blocked = positions[None, :] >= lengths[:, None]  # (B, n)
    mask = torch.zeros(blocked.shape, dtype=dtype, device=lengths.device)
    return mask.masked_fill(blocked, float("-inf"))[:, None, :]
