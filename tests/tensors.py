"""Seeded random tensors for the unit tests."""

from __future__ import annotations

from collections.abc import Callable

import torch


def seeded_randn(seed: int = 0) -> Callable[..., torch.Tensor]:
    """randn(*shape) drawing from its own generator: a test module's draws do not depend on
    what other modules drew before it."""
    generator = torch.Generator().manual_seed(seed)
    return lambda *shape: torch.randn(*shape, generator=generator)


def copy_to_torch(module) -> torch.nn.MultiheadAttention:
    """PyTorch's nn.MultiheadAttention holding the weights of an nbhelpers
    MultiHeadAttention (batch_first, eval mode): the independent reference."""
    reference = torch.nn.MultiheadAttention(module.d_model, module.n_heads, batch_first=True)
    with torch.no_grad():
        reference.in_proj_weight.copy_(
            torch.cat([module.W_Q.weight, module.W_K.weight, module.W_V.weight])
        )
        reference.in_proj_bias.copy_(torch.cat([module.W_Q.bias, module.W_K.bias, module.W_V.bias]))
        reference.out_proj.weight.copy_(module.W_O.weight)
        reference.out_proj.bias.copy_(module.W_O.bias)
    return reference.eval()
