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


def first_matrix(expected, got) -> tuple[np.ndarray, np.ndarray]:
    """The 2-D slice (over any leading batch axes) where got differs most from expected."""
    e, g = to_numpy(expected), to_numpy(got)
    if e.ndim == 1:
        return e[None, :], g[None, :]
    e2, g2 = e.reshape(-1, *e.shape[-2:]), g.reshape(-1, *g.shape[-2:])
    gap = np.where(np.isclose(e2, g2, equal_nan=True) | (e2 == g2), 0.0, 1.0)
    worst = int(gap.reshape(len(gap), -1).sum(1).argmax())
    return e2[worst], g2[worst]


@course_font
def check_difference_figure(expected, got, *, title: str | None = None) -> Figure:
    """Expected, yours, and |yours - expected| as three heatmaps of one shared size. -inf is
    drawn grey in the first two; the third marks where one side is infinite or NaN and the
    other is not as a full-scale difference."""
    e, g = first_matrix(expected, got)
    rows, cols = e.shape
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
        left=0.05, right=0.95, top=0.8 if title else 0.86, bottom=0.1, wspace=0.45
    )
    return figure
