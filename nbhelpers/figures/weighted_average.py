"""Notebook 03's picture of o_i = Σ_j a_ij v_j: with 2-dimensional values, o_i is a point,
and because the weights are non-negative and sum to 1 it lies inside the convex hull of the
v_j (the smallest polygon around them), pulled towards the heavily weighted ones."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from matplotlib.figure import Figure
from matplotlib.patches import Polygon

from ..support.language import tr
from .bars import SERIES_COLOURS
from .canvas import BlitCanvas, check_labels, keep_labels_apart, to_numpy
from .style import BLUE, LIGHT_GREY, course_font


def convex_hull(points: np.ndarray) -> np.ndarray:
    """The corners of the convex hull of 2-D points, counter-clockwise (Andrew's monotone
    chain); for fewer than 3 distinct points, the points themselves."""
    unique = np.unique(points, axis=0)
    if len(unique) < 3:
        return unique

    def cross(o, a, b):
        return (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0])

    def chain(ordered):
        hull = []
        for p in ordered:
            while len(hull) >= 2 and cross(hull[-2], hull[-1], p) <= 0:
                hull.pop()
            hull.append(p)
        return hull

    ordered = sorted(map(tuple, unique))
    lower, upper = chain(ordered), chain(reversed(ordered))
    return np.array(lower[:-1] + upper[:-1])


class WeightedAverageCanvas(BlitCanvas):
    """The values v_j as dots (size ∝ a_ij), their convex hull, and o_i, redrawn in place.

    The artists are made once per set of values and labels; a draw only changes the dots'
    sizes, the weights in the labels, the spokes and o_i. With `blit=True` (for the explorer)
    `png()` renders the axes, the hull and the legend once per set of values and then only
    paints what a weight moves over them; with `blit=False` every artist is an ordinary one.
    """

    def __init__(
        self, *, figsize: tuple[float, float] = (5.2, 4.4), dpi: int = 100, blit: bool = False
    ):
        super().__init__(figsize=figsize, dpi=dpi, blit=blit)
        self.ax = self.figure.add_subplot()
        self.figure.subplots_adjust(left=0.16, right=0.97, bottom=0.12, top=0.9)
        self._layout: tuple | None = None  # (values, labels) the artists were made for
        self._made: list = []  # the artists made for the layout, removed with it

    def draw(
        self,
        values,
        weights,
        labels: Sequence | None = None,
        *,
        title: str | None = None,
    ) -> Figure:
        """values (m, 2): the value vectors; weights (m,): one query's weights a_ij."""
        V, a = to_numpy(values), to_numpy(weights).reshape(-1)
        if V.ndim != 2 or V.shape[1] != 2:
            raise ValueError(
                tr(
                    "values must be (m, 2): 2-dimensional value vectors, got {V_shape}",
                    V_shape=V.shape,
                )
            )
        if a.shape != (V.shape[0],):
            raise ValueError(
                tr(
                    "weights must hold one weight per value, {m}, got {a_shape}",
                    m=V.shape[0],
                    a_shape=a.shape,
                )
            )
        labels = check_labels("labels", labels, V.shape[0], unit=tr("values"))
        layout = (V.tobytes(), tuple(labels))
        new_layout = layout != self._layout
        if new_layout:
            self._build(V)
            self._layout = layout
        o = a @ V  # o_i = Σ_j a_ij v_j
        for j, (x, y) in enumerate(V):
            self._dots[j].set_sizes([40 + 600 * a[j]])
            self._labels[j].set_text(f"{labels[j]}  {a[j]:.2f}")
            self._spokes[j].set_data([o[0], x], [o[1], y])
            self._spokes[j].set_linewidth(0.5 + 3 * a[j])
        self._star.set_offsets([o])
        self._title.set_text(title or "")
        if new_layout:
            # Placed once per layout: a weight always prints as d.dd, so a label keeps its
            # width as the weights change.
            keep_labels_apart(self.figure, self._labels)
        return self.figure

    def _build(self, V: np.ndarray) -> None:
        for artist in self._made:
            artist.remove()
        ax = self.ax
        outline = Polygon(convex_hull(V), closed=True, facecolor="#e8eef6", edgecolor=BLUE,
                          zorder=0)  # fmt: skip
        self._dots, self._labels, self._spokes = [], [], []
        for x, y in V:
            self._dots.append(
                ax.scatter([x], [y], s=40, color=SERIES_COLOURS[0], alpha=0.8, zorder=2)
            )
            self._labels.append(
                ax.annotate("", (x, y), textcoords="offset points", xytext=(8, 6), fontsize=10)
            )
            self._spokes.append(ax.plot([x, x], [y, y], color=LIGHT_GREY, zorder=1)[0])
        self._star = ax.scatter(
            [V[0, 0]],
            [V[0, 1]],
            marker="*",
            s=260,
            color=SERIES_COLOURS[3],
            zorder=3,
            label="$o_i = \\sum_j a_{ij} v_j$",
        )
        legend = ax.legend(loc="lower right", fontsize=9)
        pad = 0.25 * max(float(np.ptp(V[:, 0])), float(np.ptp(V[:, 1])), 1e-6)
        ax.set_xlim(V[:, 0].min() - pad, V[:, 0].max() + 2 * pad)
        ax.set_ylim(V[:, 1].min() - pad, V[:, 1].max() + pad)
        ax.set_xlabel(tr("value feature 0"))
        ax.set_ylabel(tr("value feature 1"))
        self._title = ax.set_title("", fontsize=11)
        moving = [*self._spokes, *self._dots, self._star, *self._labels]
        self._made = [ax.add_patch(outline), *moving, legend]
        self.changing(*moving, self._title, replace=True)

    def shows(self):
        return self._layout


@course_font
def weighted_average_figure(values, weights, labels=None, **draw_options) -> Figure:
    """A new Figure of o_i among the values v_j; see WeightedAverageCanvas.draw."""
    return WeightedAverageCanvas().draw(values, weights, labels, **draw_options)
