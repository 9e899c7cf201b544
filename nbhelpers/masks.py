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
