"""Notebook 03's picture of O = AV for one query: each value row v_j scaled by its weight
a_ij, and their sum, the output row o_i."""

from __future__ import annotations

from collections.abc import Sequence

import matplotlib
import numpy as np
from matplotlib.figure import Figure

from ..support.language import tr
from .canvas import Canvas, check_labels, check_row_index, to_numpy
from .style import course_font


@course_font
def weighted_rows_figure(
    A,
    V,
    query: int,
    labels: Sequence[str] | None = None,
    feature_names: Sequence[str] | None = None,
    *,
    title: str | None = None,
) -> Figure:
    """Three panels for row `query` of O = AV: the value rows v_j, the same rows times
    their weight a_ij, and o_i = Σ_j a_ij v_j. One colour scale for all three."""
    weights, values = to_numpy(A), to_numpy(V)
    if weights.ndim != 2 or values.ndim != 2 or weights.shape[1] != values.shape[0]:
        raise ValueError(
            tr(
                "A must be (n, m) and V (m, d_v) with the same m, got {weights_shape} and "
                "{values_shape}",
                weights_shape=weights.shape,
                values_shape=values.shape,
            )
        )
    check_row_index("query", query, weights.shape[0])
    m, d_v = values.shape
    labels = check_labels("labels", labels, m, unit=tr("keys"))
    features = check_labels("feature_names", feature_names, d_v, unit=tr("value features"))
    a = weights[query]
    scaled = a[:, None] * values
    output = scaled.sum(axis=0, keepdims=True)
    limit = max(float(np.abs(values).max()), 1e-9)
    norm = matplotlib.colors.Normalize(-limit, limit)
    cmap = matplotlib.colormaps["RdBu_r"]
    figure = Canvas(figsize=(10.6, 0.46 * m + 2.4)).figure
    axes = figure.subplots(1, 3, gridspec_kw={"width_ratios": [1, 1, 1]})
    figure.subplots_adjust(left=0.08, right=0.98, bottom=0.14, top=0.8, wspace=0.45)
    panels = (
        (values, labels, tr("values $v_j$")),
        (scaled, [f"{a[j]:.2f} × {labels[j]}" for j in range(m)], tr("$a_{ij}\\, v_j$")),
        (output, [f"$o_{{{query}}}$"], tr("$o_i = \\sum_j a_{ij} v_j$")),
    )
    for ax, (matrix, rows, heading) in zip(axes, panels, strict=True):
        ax.imshow(matrix, cmap=cmap, norm=norm, aspect="auto")
        for i in range(matrix.shape[0]):
            for f in range(matrix.shape[1]):
                value = float(matrix[i, f])
                colour = "white" if abs(norm(value) - 0.5) > 0.3 else "black"
                ax.text(f, i, f"{value:.2f}", ha="center", va="center", fontsize=9, color=colour)
        ax.set_yticks(range(matrix.shape[0]), rows, fontsize=9)
        ax.set_xticks(range(d_v), features, fontsize=9)
        ax.set_title(heading, fontsize=10)
        ax.tick_params(length=0)
    figure.suptitle(title or tr("O = AV, one row: the values, weighted, then summed"),
                    fontsize=12)  # fmt: skip
    return figure
