"""Notebook 07's activation functions: GELU (exact and tanh) beside ReLU."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from matplotlib.figure import Figure

from ..support.language import tr
from .bars import SERIES_COLOURS
from .canvas import Canvas, to_numpy
from .style import LIGHT_GREY, course_font


@course_font
def activation_figure(grid=None, *, figsize: tuple[float, float] = (8.4, 3.2)) -> Figure:
    """Left: ReLU, exact GELU and tanh GELU on `grid` (default [-4, 4]); right: how far the
    tanh approximation is from the exact GELU, on a scale a thousand times finer."""
    x = torch.linspace(-4, 4, 801) if grid is None else torch.as_tensor(grid, dtype=torch.float32)
    figure = Canvas(figsize=figsize, dpi=100).figure
    curves, gap = figure.subplots(1, 2)
    xs = to_numpy(x)
    curves.plot(xs, to_numpy(F.relu(x)), color=SERIES_COLOURS[1], label="ReLU  max(0, x)")
    curves.plot(xs, to_numpy(F.gelu(x)), color=SERIES_COLOURS[0], label="GELU  x Φ(x)")
    curves.plot(
        xs, to_numpy(F.gelu(x, approximate="tanh")), color="black", linestyle=":",
        label=tr("GELU, tanh form (GPT-1)"),
    )  # fmt: skip
    curves.axhline(0, color=LIGHT_GREY, linewidth=0.6)
    curves.set_xlabel("x")
    curves.set_title(tr("GELU is a smooth ReLU"), fontsize=10)
    curves.legend(fontsize=9)
    difference = to_numpy(F.gelu(x, approximate="tanh") - F.gelu(x)) * 1e3
    gap.plot(xs, difference, color=SERIES_COLOURS[2])
    gap.axhline(0, color=LIGHT_GREY, linewidth=0.6)
    gap.set_xlabel("x")
    gap.set_ylabel(r"$\times 10^{-3}$")
    gap.set_title(tr("tanh form − exact GELU"), fontsize=10)
    figure.tight_layout()
    return figure
