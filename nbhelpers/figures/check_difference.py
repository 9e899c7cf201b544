"""What an exercise checker draws when a matrix answer is wrong: the expected matrix, the
learner's, and where they differ, side by side for the failing case."""

from __future__ import annotations

import matplotlib
import numpy as np
from matplotlib.figure import Figure

from ..support.language import tr
from .canvas import Canvas, to_numpy
from .style import PALE_GREY, course_font

BLOCKED = PALE_GREY  # -inf (a masked entry), the same grey as the heatmaps' masked cells


def worst_matrix(expected, got) -> tuple[np.ndarray, np.ndarray, tuple[int, ...] | None]:
    """The 2-D slice (over any leading batch axes) that holds the largest error, the one the
    report gives, and its index over those axes (None for a single matrix). A NaN or an
    infinity on one side only counts as the largest error of all."""
    e, g = to_numpy(expected), to_numpy(got)
    if e.ndim == 1:
        return e[None, :], g[None, :], None
    batch = e.shape[:-2]
    e2, g2 = e.reshape(-1, *e.shape[-2:]), g.reshape(-1, *g.shape[-2:])
    with np.errstate(invalid="ignore"):
        gap = np.abs(e2 - g2)
    same = (e2 == g2) | (np.isnan(e2) & np.isnan(g2))
    gap = np.where(same, 0.0, np.where(np.isfinite(gap), gap, np.inf))
    worst = int(gap.reshape(len(gap), -1).max(1).argmax())
    where = tuple(int(i) for i in np.unravel_index(worst, batch)) if batch else None
    return e2[worst], g2[worst], where


@course_font
def check_difference_figure(expected, got, *, title: str | None = None) -> Figure:
    """Expected, yours, and |yours - expected| as three heatmaps of one shared size, for the
    matrix of a batch that holds the largest error (the title says which). -inf is
    drawn grey in the first two; the third marks where one side is infinite or NaN and the
    other is not as a full-scale difference."""
    e, g, where = worst_matrix(expected, got)
    rows, cols = e.shape
    if where is not None:  # which matrix of the batch this is: the one with the largest error
        shape = to_numpy(expected).shape[:-2]
        title = (title + "\n" if title else "") + tr(
            "matrix [{index}] of a batch of {batch}: the one with the largest error",
            index=", ".join(map(str, where)),
            batch=" × ".join(map(str, shape)),
        )
    side = min(0.42 * max(rows, cols) + 1.2, 3.6)
    figure = Canvas(figsize=(3 * side + 1.2, side + 0.9)).figure
    axes = figure.subplots(1, 3)
    finite = np.concatenate([e[np.isfinite(e)], g[np.isfinite(g)]])
    low, high = (finite.min(), finite.max()) if finite.size else (0.0, 1.0)
    if high == low:
        high = low + 1.0
    both = np.isfinite(e) & np.isfinite(g)
    with np.errstate(invalid="ignore"):
        gap = np.where(
            both, np.abs(g - e), np.where((e == g) | (np.isnan(e) & np.isnan(g)), 0, np.inf)
        )
    scale = (
        gap[np.isfinite(gap)].max()
        if np.isfinite(gap).any() and gap[np.isfinite(gap)].max() > 0
        else 1.0
    )
    gap = np.where(np.isfinite(gap), gap, scale)
    if np.isinf(e).any() or np.isinf(g).any():
        figure.text(0.5, 0.02, tr("grey: -inf (a blocked entry)"), ha="center", fontsize=9)
    for ax, values, label, cmap, limits in (
        (axes[0], e, tr("expected"), "viridis", (low, high)),
        (axes[1], g, tr("yours"), "viridis", (low, high)),
        (axes[2], gap, tr("|yours − expected|"), "Reds", (0.0, scale)),
    ):
        shown = np.ma.masked_invalid(values)
        colours = matplotlib.colormaps[cmap].with_extremes(bad=BLOCKED)
        image = ax.imshow(shown, cmap=colours, vmin=limits[0], vmax=limits[1], aspect="equal")
        ax.set_title(label, fontsize=10)
        ax.set_xticks(range(cols) if cols <= 12 else [])
        ax.set_yticks(range(rows) if rows <= 12 else [])
        ax.tick_params(labelsize=9)
        figure.colorbar(image, ax=ax, fraction=0.046, pad=0.04).ax.tick_params(labelsize=9)
    if title:
        figure.suptitle(title, fontsize=10)
    figure.subplots_adjust(
        left=0.05,
        right=0.95,
        top=0.86 - 0.07 * (title.count("\n") + 1 if title else 0),
        bottom=0.1,
        wspace=0.45,
    )
    return figure
