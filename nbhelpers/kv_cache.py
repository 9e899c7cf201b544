"""Greedy generation for GPT1, without and with a key/value cache.

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
from .inference import generate
from .support.checks import status
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


def generate_without_cache(
    model: GPT1, ids: torch.Tensor, max_new_tokens: int, *, return_logits: bool = False
):
    """Greedy generation that reruns the whole model on all tokens so far at every step:
    generate(..., top_k=1). ids (n,) or (B, n); returns (..., n + max_new_tokens), and with
    return_logits also the logits that chose each new token, (..., max_new_tokens, vocab).

    Notebook 10.
    """
    return generate(model, ids, max_new_tokens, top_k=1, return_logits=return_logits)


def generate_with_cache(
    model: GPT1, ids: torch.Tensor, max_new_tokens: int, *, return_logits: bool = False
):
    """Greedy generation with a KVCache, the prompt run once and then one token per step:
    generate(..., top_k=1, cache=True). Same arguments and results as
    `generate_without_cache`.

    Notebook 10.
    """
    return generate(model, ids, max_new_tokens, top_k=1, cache=True, return_logits=return_logits)


def check_cache_agrees(
    model: GPT1, ids: torch.Tensor, max_new_tokens: int, *, atol: float = 1e-4
) -> torch.Tensor:
    """Generate both ways; print and assert that the tokens are identical and the logits
    agree within atol (different matrix shapes round differently, so not bit for bit).

    Returns the generated tokens.

    Notebook 10.
    """
    slow, slow_logits = generate_without_cache(model, ids, max_new_tokens, return_logits=True)
    fast, fast_logits = generate_with_cache(model, ids, max_new_tokens, return_logits=True)
    error = float((slow_logits - fast_logits).abs().max())
    same = torch.equal(slow, fast)
    ok = same and error <= atol
    if same:
        line = tr(
            "{status} cached vs recomputed generation: the same {n} new tokens; logits max "
            "error {error:.1e} (tolerance {atol:.0e})",
            status=status(ok), n=max_new_tokens, error=error, atol=atol,
        )  # fmt: skip
    else:
        line = tr(
            "{status} cached vs recomputed generation: DIFFERENT {n} new tokens; logits max "
            "error {error:.1e} (tolerance {atol:.0e})",
            status=status(ok), n=max_new_tokens, error=error, atol=atol,
        )  # fmt: skip
    print(line)
    if not same:
        differs = (slow != fast).reshape(-1, slow.shape[-1]).any(dim=0).nonzero()
        raise AssertionError(
            tr("cached and recomputed generation differ, first at position {position}",
               position=int(differs[0]))
        )  # fmt: skip
    if not error <= atol:
        raise AssertionError(
            tr("cached vs recomputed logits: max error {error:.3e} exceeds the tolerance "
               "{atol:.0e}", error=error, atol=atol)
        )  # fmt: skip
    return fast
