"""Statistics of attention scores and weights: why the scores are divided by sqrt(d_k).

Var(q · k) = d_k          for q, k with independent unit-variance entries
Var(q · k / sqrt(d_k)) = 1
H(a) = -Σ_j a_j log a_j   the entropy of a row of weights: 0 for one-hot, log m for uniform
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np
import torch
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from .charts import SERIES_COLOURS
from .plotting import to_numpy
from .validation import check_float_tensor


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
    """
    for name, value in (("d_k", d_k), ("samples", samples)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"{name} must be a positive int, got {value!r}")
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
    """The sample variance of q · k (or q · k / sqrt(d_k)); about d_k (or 1) in expectation."""
    products = random_dot_products(d_k, samples, scale=scale, generator=generator, device=device)
    return float(products.var())


def row_entropy(weights: torch.Tensor, dim: int = -1) -> torch.Tensor:
    """H = -Σ_j a_j log a_j along `dim`, in nats, with 0 · log 0 taken as 0 (masked keys)."""
    check_float_tensor("weights", weights, min_rank=1)
    logs = torch.log(weights.clamp_min(torch.finfo(weights.dtype).tiny))
    return -(torch.where(weights > 0, weights * logs, torch.zeros_like(weights))).sum(dim=dim)


def against_dk_figure(
    d_ks: Sequence[int],
    series: Mapping[str, Sequence[float]],
    *,
    ylabel: str,
    title: str = "",
    theory: Mapping[str, Sequence[float]] | None = None,
    figsize: tuple[float, float] = (5.6, 3.6),
    dpi: int = 90,
) -> Figure:
    """A new Figure: each series against d_k on log-log axes, `theory` curves dashed.

    Power laws are straight lines there: a quantity growing like d_k has slope 1, a constant
    one is flat.
    """
    d_ks = np.asarray(d_ks, dtype=float)
    if d_ks.ndim != 1 or d_ks.size == 0 or (d_ks <= 0).any():
        raise ValueError(f"d_ks must be a non-empty 1-D sequence of positive sizes, got {d_ks}")
    figure = Figure(figsize=figsize, dpi=dpi)
    FigureCanvasAgg(figure)
    ax = figure.add_subplot()
    curves = [(name, values, False) for name, values in series.items()]
    curves += [(name, values, True) for name, values in (theory or {}).items()]
    for k, (name, values, dashed) in enumerate(curves):
        values = to_numpy(values).reshape(-1)
        if values.shape != d_ks.shape:
            raise ValueError(
                f"series {name!r} has {values.size} values but there are {d_ks.size} d_k values"
            )
        if dashed:
            ax.plot(d_ks, values, linestyle="--", color="#707070", linewidth=1, label=name)
        else:
            colour = SERIES_COLOURS[k % len(SERIES_COLOURS)]
            ax.plot(d_ks, values, marker="o", markersize=4, label=name, color=colour)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("$d_k$")
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(fontsize=8)
    figure.tight_layout()
    return figure
