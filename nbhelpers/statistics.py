"""Statistics of attention scores and weights: why the scores are divided by sqrt(d_k).

Var(q · k) = d_k          for q, k with independent unit-variance entries
Var(q · k / sqrt(d_k)) = 1
H(a) = -Σ_j a_j log a_j   the entropy of a row of weights: 0 for one-hot, log m for uniform
KL(p ‖ q) = Σ_j p_j log(p_j / q_j)   how far a model's q is from the true p (notebook 08)
p in values ≈ c · n^p     the growth exponent read off a log-log plot (notebooks 01, 09)
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import torch

from .support.language import tr
from .support.validation import check_float_tensor, check_positive_int


def random_dot_products(
    d_k: int,
    samples: int,
    *,
    scale: bool = False,
    generator: torch.Generator | None = None,
    device: torch.device | str = "cpu",
) -> torch.Tensor:
    """`samples` values of q · k (divided by sqrt(d_k) when scaled) for q, k ~ N(0, I_{d_k}).

    The draws come from the CPU `generator`, so a seed gives the same numbers on any device.

    Notebook 01.
    """
    check_positive_int("d_k", d_k)
    check_positive_int("samples", samples)
    q = torch.randn(samples, d_k, generator=generator).to(device)
    k = torch.randn(samples, d_k, generator=generator).to(device)
    products = (q * k).sum(dim=-1)
    return products / math.sqrt(d_k) if scale else products


def dot_product_variance(
    d_k: int,
    samples: int,
    *,
    scale: bool = False,
    generator: torch.Generator | None = None,
    device: torch.device | str = "cpu",
) -> float:
    """The sample variance of q · k (or q · k / sqrt(d_k)); about d_k (or 1) in expectation.

    Notebook 01.
    """
    check_positive_int("samples", samples)
    if samples < 2:  # one product has no spread: torch would return NaN without a word
        raise ValueError(
            tr("samples must be >= 2 to estimate a variance, got {samples}", samples=samples)
        )
    products = random_dot_products(d_k, samples, scale=scale, generator=generator, device=device)
    return float(products.var())


def row_entropy(weights: torch.Tensor, dim: int = -1) -> torch.Tensor:
    """H = -Σ_j a_j log a_j along `dim`, in nats, with 0 · log 0 taken as 0 (masked keys).

    Notebook 02.
    """
    check_float_tensor("weights", weights, min_rank=1)
    if torch.isnan(weights).any():  # NaN > 0 is False: it would pass silently as a 0 weight
        raise ValueError(tr("weights must not hold NaN (a row of plain softmax over all -inf?)"))
    logs = torch.log(weights.clamp_min(torch.finfo(weights.dtype).tiny))
    return -(torch.where(weights > 0, weights * logs, torch.zeros_like(weights))).sum(dim=dim)


def fitted_slope(ns: Sequence[float], values: Sequence[float]) -> float:
    """The exponent p of the least-squares fit values ≈ c · n^p (a line on log-log axes).

    Notebooks 01 and 09.
    """
    ns, values = np.asarray(ns, dtype=float), np.asarray(values, dtype=float)
    keep = (ns > 0) & (values > 0) & np.isfinite(values)
    if keep.sum() < 2:
        raise ValueError(
            tr(
                "need at least 2 positive points to fit a slope, got {positive}",
                positive=int(keep.sum()),
            )
        )
    slope, _ = np.polyfit(np.log(ns[keep]), np.log(values[keep]), 1)
    return float(slope)


def kl_divergence(true_probs: torch.Tensor, model_probs: torch.Tensor, dim: int = -1):
    """KL(true ‖ model) in nats over `dim`, in float64: terms where the truth is 0 count 0,
    and it is infinite where the model gives 0 to a possible token. A 1-D pair gives a
    float; batches give a tensor of the other dims (notebook 08).

    Notebooks 08 and 09.
    """
    p = torch.as_tensor(true_probs).double()
    q = torch.as_tensor(model_probs).double().to(p.device)
    if p.shape != q.shape:
        raise ValueError(
            tr(
                "true_probs {p_shape} and model_probs {q_shape} must have one shape",
                p_shape=tuple(p.shape),
                q_shape=tuple(q.shape),
            )
        )
    possible = p > 0
    log_ratio = torch.log(torch.where(possible, p, 1.0)) - torch.log(q)
    kl = torch.where(possible, p * log_ratio, torch.zeros_like(p)).sum(dim)
    return float(kl) if kl.dim() == 0 else kl
