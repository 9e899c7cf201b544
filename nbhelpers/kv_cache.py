"""The key/value cache that greedy generation (inference.generate, cache=True) fills.

Generating token t+1 needs the last row of h_L only, and with a causal mask the keys and
values of positions 0..t never change once computed: a later token cannot alter them. So

  * without a cache, every step runs the whole model on all tokens so far: step t costs
    O(t) projections and feed-forwards and O(t²) attention, so O(N²) and O(N³) for N tokens;
  * with a cache, every step runs the model on the one new token; its query attends to the
    keys and values kept from earlier steps: O(1) projections and O(t) attention per step,
    so O(N) and O(N²) in all.

The cache holds, per layer, K and V of shape (batch, heads, positions, d_head): it costs
2 · n_layers · batch · positions · d_model numbers of memory and saves recomputing them.
There is one forward pass: `model(new_ids, cache=cache)` runs GPT1.forward, whose blocks pass
the cache to their attention, so the cached path cannot drift from the full one.
"""

from __future__ import annotations

import torch

from .gpt1 import GPT1, check_gpt1
from .support.language import tr
from .support.validation import check_positive_int


class LayerCache:
    """One layer's keys and values (B, h, capacity, d_head), filled from position 0 on."""

    def __init__(self, shape: tuple[int, ...], device, dtype):
        self.keys = torch.empty(shape, device=device, dtype=dtype)
        self.values = torch.empty(shape, device=device, dtype=dtype)

    def store(self, start: int, k: torch.Tensor, v: torch.Tensor):
        """Write the new positions' k, v (B, h, t, d_head) at `start`; return all K, V so far."""
        end = start + k.shape[-2]
        self.keys[:, :, start:end] = k
        self.values[:, :, start:end] = v
        return self.keys[:, :, :end], self.values[:, :, :end]


class KVCache:
    """Keys and values of every layer for positions 0 .. length-1, preallocated to capacity.

    Pass it to the model, `model(new_ids, cache=cache)`: the new tokens take positions
    length .. length+t-1, and `length` grows by t.

    Notebook 10.
    """

    def __init__(self, model: GPT1, batch: int, capacity: int):
        check_gpt1(model)
        config = model.config
        check_positive_int("batch", batch)
        check_positive_int("capacity", capacity)
        if capacity > config.n_ctx:
            raise ValueError(
                tr(
                    "capacity must be <= n_ctx={n_ctx}, got {capacity}",
                    n_ctx=config.n_ctx,
                    capacity=capacity,
                )
            )
        shape = (batch, config.n_heads, capacity, config.d_model // config.n_heads)
        dtype = model.W_e.weight.dtype
        self.layers = [LayerCache(shape, model.device, dtype) for _ in model.blocks]
        self.capacity = capacity
        self.length = 0

    def check_room(self, new: int) -> None:
        if self.length + new > self.capacity:
            raise ValueError(
                tr(
                    "the cache holds {capacity} positions, asked for {needed}",
                    capacity=self.capacity,
                    needed=self.length + new,
                )
            )

    @property
    def nbytes(self) -> int:
        """Memory the cache holds (all of its capacity, filled or not)."""
        return sum(t.numel() * t.element_size() for c in self.layers for t in (c.keys, c.values))

    def __repr__(self) -> str:
        return f"KVCache(layers={len(self.layers)}, capacity={self.capacity})"
