"""Notebook 04's picture of masking, one step per panel: the scores S, the mask M, their sum
S + M, and softmax(S + M), side by side for the same queries and keys."""

from __future__ import annotations

from collections.abc import Sequence

import matplotlib
import numpy as np
from matplotlib.figure import Figure

from ..support.language import tr
from .canvas import MASKED_COLOUR, Canvas, check_labels, to_numpy
from .style import course_font


def _text_colour(value: float, norm, cmap) -> str:
    red, green, blue, _ = cmap(norm(value))
    return "black" if 0.299 * red + 0.587 * green + 0.114 * blue > 0.5 else "white"


@course_font
def mask_steps_figure(
    S, M, tokens: Sequence[str] | None = None, *, title: str | None = None
) -> Figure:
    """Four heatmaps of one (n, n) matrix each: S, M (0 or −∞), S + M, softmax(S + M).
    Every cell shows its number; a −∞ cell is grey and shows −∞ (or × in the weights)."""
    scores, mask = to_numpy(S), to_numpy(M)
    if scores.ndim != 2 or scores.shape != mask.shape:
        raise ValueError(
            tr(
                "S and M must be matrices of the same shape (n, m), got {scores_shape} and "
                "{mask_shape}",
                scores_shape=scores.shape,
                mask_shape=mask.shape,
            )
        )
    if np.isnan(mask).any() or not np.all((mask == 0) | np.isneginf(mask)):
        raise ValueError(tr("M must hold only 0 (may attend) and -inf (masked)"))
    n, m = scores.shape
    labels_q = check_labels("tokens", tokens, n, unit=tr("queries"))
    labels_k = (
        check_labels("tokens", tokens, m, unit=tr("keys")) if n == m else [str(j) for j in range(m)]
    )
    total = scores + mask
    shifted = np.where(np.isneginf(total), -np.inf, total - np.max(total, axis=1, keepdims=True))
    weights = np.exp(shifted)
    sums = weights.sum(axis=1, keepdims=True)
    weights = np.divide(weights, sums, out=np.zeros_like(weights), where=sums > 0)
    panels = [
        (scores, "$S = QK^T/\\sqrt{d_k}$", "RdBu_r", False),
        (mask, tr("mask $M$"), None, True),
        (total, "$S + M$", "RdBu_r", True),
        (weights, "$A = \\mathrm{softmax}(S + M)$", "viridis", True),
    ]
    finite = scores[np.isfinite(scores)]
    limit = max(float(np.abs(finite).max()) if finite.size else 1.0, 1e-9)
    figure = Canvas(figsize=(3.0 * 4 + 0.6, 0.42 * n + 2.1)).figure
    axes = figure.subplots(1, 4)
    figure.subplots_adjust(left=0.06, right=0.99, bottom=0.2, top=0.8, wspace=0.32)
    for index, (ax, (values, heading, cmap_name, masked)) in enumerate(
        zip(axes, panels, strict=True)
    ):
        hidden = np.isneginf(mask) if masked else np.zeros_like(mask, dtype=bool)
        if cmap_name is None:  # the mask itself: 0 white, −∞ grey
            shown = np.where(hidden, np.nan, 0.0)
            cmap = matplotlib.colormaps["Greys"].with_extremes(bad=MASKED_COLOUR)
            norm = matplotlib.colors.Normalize(0, 1)
        else:
            cmap = matplotlib.colormaps[cmap_name].with_extremes(bad=MASKED_COLOUR)
            low, high = (0.0, 1.0) if cmap_name == "viridis" else (-limit, limit)
            norm = matplotlib.colors.Normalize(low, high)
            shown = np.where(hidden, np.nan, values)
        ax.imshow(shown, cmap=cmap, norm=norm, aspect="auto")
        for i in range(n):
            for j in range(m):
                if hidden[i, j]:
                    text, colour = ("×" if index == 3 else "−∞"), "#606060"
                else:
                    value = float(values[i, j])
                    text = f"{value:.2f}"
                    colour = "black" if cmap_name is None else _text_colour(value, norm, cmap)
                ax.text(j, i, text, ha="center", va="center", fontsize=9, color=colour)
        ax.set_xticks(range(m), labels_k, fontsize=10)
        ax.set_yticks(range(n), labels_q if index == 0 else [""] * n, fontsize=10)
        ax.set_xlabel(tr("key j"), fontsize=10)
        ax.set_title(heading, fontsize=11)
        ax.tick_params(length=0)
    axes[0].set_ylabel(tr("query i"), fontsize=10)
    for ax, symbol in zip(axes[:3], ("+", "=", "→"), strict=True):
        ax.annotate(symbol, xy=(1.16, 0.5), xycoords="axes fraction", ha="center",
                    va="center", fontsize=16)  # fmt: skip
    figure.suptitle(title or tr("Masking, step by step"), fontsize=12)
    return figure
