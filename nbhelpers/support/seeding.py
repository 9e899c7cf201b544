"""Reproducible randomness, so that stored notebook outputs match a fresh run."""

from __future__ import annotations

import random

import numpy as np
import torch

from .language import tr
from .validation import check_seed, is_int


def seed_everything(seed: int) -> torch.Generator:
    """Seed Python's, NumPy's and torch's generators (all devices); return a seeded CPU
    generator for code that wants its own stream."""
    if not is_int(seed):
        raise TypeError(tr("seed must be an int, got {seed_type}", seed_type=type(seed).__name__))
    check_seed("seed", seed)
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)  # also seeds every CUDA device
    return torch.Generator().manual_seed(seed)
