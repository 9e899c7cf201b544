"""Seeded random tensors for the unit tests."""

from __future__ import annotations

from collections.abc import Callable

import torch


def seeded_randn(seed: int = 0) -> Callable[..., torch.Tensor]:
    """randn(*shape) drawing from its own generator: a test module's draws do not depend on
    what other modules drew before it."""
    generator = torch.Generator().manual_seed(seed)
    return lambda *shape: torch.randn(*shape, generator=generator)
