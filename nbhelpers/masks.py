"""Masks in the additive form of the theory: 0 where a key may be attended, -inf where not."""

from __future__ import annotations

import torch


def causal_mask(n: int, m: int | None = None, device=None) -> torch.Tensor:
    """The mask matrix M: M_ij = 0 for j <= i, -inf for j > i (no looking at the future).

    With m > n keys (a cache of earlier tokens), the n queries are the *last* n positions, so
    query i may see keys j <= i + (m - n) (torch calls this "lower-right" alignment).
    """
    m = n if m is None else m
    for name, value in (("n", n), ("m", m)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"{name} must be a positive int, got {value!r}")
    if m < n:
        raise ValueError(f"m (keys) must be >= n (queries) for a causal mask, got n={n}, m={m}")
    blocked = torch.ones(n, m, dtype=torch.bool, device=device).triu(diagonal=m - n + 1)
    return torch.zeros(n, m, device=device).masked_fill(blocked, float("-inf"))


def padding_mask(lengths, n: int, device=None) -> torch.Tensor:
    """Key-padding mask for a batch of sentences padded to length n: shape (B, 1, n).

    Sentence b has lengths[b] real tokens; keys j >= lengths[b] are padding and get -inf.
    The middle axis of size 1 broadcasts over the queries, so `causal_mask(n) +
    padding_mask(lengths, n)` gives each sentence its own (n, n) mask.
    """
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"n must be a positive int, got {n!r}")
    lengths = torch.as_tensor(lengths, device=device)
    if lengths.dim() != 1 or lengths.is_floating_point() or lengths.dtype == torch.bool:
        raise ValueError(
            f"lengths must be a 1-D sequence of ints (one per sentence), got {lengths.dtype} "
            f"of shape {tuple(lengths.shape)}"
        )
    if (lengths < 0).any() or (lengths > n).any():
        raise ValueError(f"lengths must lie in [0, n={n}], got {lengths.tolist()}")
    positions = torch.arange(n, device=lengths.device)
    blocked = positions[None, :] >= lengths[:, None]  # (B, n)
    mask = torch.zeros(blocked.shape, device=lengths.device).masked_fill(blocked, float("-inf"))
    return mask[:, None, :]
