"""One attention step for one query, as a single figure that redraws quickly.

    left:          the weights A (n queries × m keys), the chosen query's row framed in red
    top middle:    that row's scores s_ij (what softmax receives)
    top right:     that row's weights a_ij = softmax(s_i)_j
    bottom right:  o_i = Σ_j a_ij v_j as bars, with every value vector v_j as dots whose size
                   is its weight a_ij: each bar sits at the weighted average of its dots.

Each key has one colour in every panel. The canvas keeps its artists between draws and, for
speed, blits (see canvas.Blitter): the frames, token labels, titles, colour bar and legend
are rendered once into a saved background, and a redraw paints only the artists that change
(bars, numbers, dots, the red row box) over it. Rendering text is what costs most in
matplotlib, and most of the text never changes. To add a panel: build its axes in `_build`,
name the artists that `draw` changes in `self.changing(...)`, and update them in `draw`.
"""

from __future__ import annotations

from collections.abc import Sequence

import matplotlib
import numpy as np
from matplotlib.figure import Figure

from ..support.language import tr
from .canvas import (
    DPI,
    MIN_FONT_PT,
    BlitCanvas,
    check_labels,
    check_row_index,
    to_numpy,
)
from .sprite_text import CellNumbers, SpriteTexts
from .style import cell_text_colours, course_font

# Axis limits move along a ladder (times powers of ten): round numbers on the axes, and bars
# that still fill a good part of their panel.
LIMIT_STEPS = (1.0, 1.5, 2.0, 3.0, 4.0, 5.0, 6.0, 8.0)
KEY_COLOURS = matplotlib.colormaps["tab10"].colors
MAX_KEYS = 10
MAX_FEATURES = 16
# Tick marks of the scaled panels; only the two ends (-L and L) get a label that changes.
TICK_FRACTIONS = (-1.0, -0.5, 0.0, 0.5, 1.0)
LABELLED_FRACTIONS = (-1.0, 1.0)


def nice_limit(largest: float) -> float:
    """The first ladder value above `largest` with 30% headroom for the numbers on the bars."""
    wanted = max(float(largest) * 1.3, 1.0)  # never below 1: small numbers look small
    decade = 10.0 ** np.floor(np.log10(wanted))
    for step in (*LIMIT_STEPS, 10.0):
        if wanted <= step * decade * (1 + 1e-9):
            return float(step * decade)
    raise AssertionError("unreachable: the ladder ends at the next power of ten")


def _matrix(name: str, values, ndim: int = 2) -> np.ndarray:
    array = to_numpy(values)
    if array.ndim != ndim:
        raise ValueError(
            tr(
                "{name} must have {ndim} dimensions, got shape {array_shape}",
                name=name,
                ndim=ndim,
                array_shape=array.shape,
            )
        )
    if not np.isfinite(array).all():
        raise ValueError(tr("{name} must be finite, but it holds NaN or ±inf", name=name))
    return array


class AttentionStepCanvas(BlitCanvas):
    """The composite figure above; `draw(...)` updates it, `png()` renders it.

    With `blit=False` every artist is an ordinary one, so the figure renders completely
    wherever it goes (show_figure, savefig); `attention_step_figure` builds it that way.
    """

    def __init__(
        self, *, figsize: tuple[float, float] = (10.4, 4.6), dpi: int = DPI, blit: bool = True
    ):
        super().__init__(figsize=figsize, dpi=dpi, blit=blit)
        self._structure: tuple | None = None  # what the background was built for

    @property
    def title(self) -> str:
        """The title as drawn (what `attention_step_figure(..., title=...)` would draw)."""
        return self._title.get_text()

    # -- building (only when the shapes or labels change) ---------------------------------
    def _build(self, rows: list[str], cols: list[str], d_v: int, features: tuple[str, ...]) -> None:
        figure = self.figure
        figure.clear()
        n, m = len(rows), len(cols)
        grid = figure.add_gridspec(
            2, 3, width_ratios=(1.25, 1, 1), left=0.07, right=0.88, bottom=0.1, top=0.84,
            wspace=0.4, hspace=0.55,
        )  # fmt: skip
        self.heat_ax = figure.add_subplot(grid[:, 0])
        self.score_ax = figure.add_subplot(grid[0, 1])
        self.weight_ax = figure.add_subplot(grid[0, 2])
        self.output_ax = figure.add_subplot(grid[1, 1:])
        colours = [KEY_COLOURS[j % len(KEY_COLOURS)] for j in range(m)]

        ax = self.heat_ax
        self._image = ax.imshow(np.zeros((n, m)), cmap="viridis", vmin=0, vmax=1, aspect="auto")
        figure.colorbar(self._image, ax=ax, fraction=0.06, pad=0.03)
        ax.set_xticks(range(m), cols)
        ax.set_yticks(range(n), rows)
        ax.tick_params(length=0)
        ax.set_xlabel(tr("key j"))
        ax.set_ylabel(tr("query i"))
        ax.set_title(tr("weights A (each row sums to 1)"), fontsize=10)
        self._cells = CellNumbers(ax, n, m, MIN_FONT_PT)
        # Above the spines (z 2.5), so that painting it last matches a full render.
        self._row_box = ax.add_patch(
            matplotlib.patches.Rectangle(
                (-0.5, -0.5), m, 1, fill=False, edgecolor="red", lw=2.5, zorder=2.6
            )
        )
        changing = [self._image, self._cells, self._row_box, *ax.spines.values()]

        self._score_bars, self._score_texts = self._bar_panel(self.score_ax, cols, colours)
        self.score_ax.set_title(tr("scores $s_{ij}$ of query i"), fontsize=10)
        self._weight_bars, self._weight_texts = self._bar_panel(self.weight_ax, cols, colours)
        self.weight_ax.set_title(tr("weights $a_{ij}$ (sum to 1)"), fontsize=10)
        self.weight_ax.set_ylim(0, 1.18)
        self._score_ticks = self._scaled_y_axis(self.score_ax)
        changing += [*self._score_ticks, *self._score_bars, self._score_texts]
        changing.append(self.score_ax.axhline(0, color="black", lw=0.6))
        changing += [*self._weight_bars, self._weight_texts]
        changing.append(self.weight_ax.axhline(0, color="black", lw=0.6))

        ax = self.output_ax
        x = np.arange(d_v)
        self._output_bars = list(ax.bar(x, np.zeros(d_v), 0.75, color="#a0a0a0", zorder=1))
        # One collection for all the dots (one per key and feature): far cheaper to draw than
        # one per key. Row j of the (m, d_v) grid is key j, spread across the feature's bar.
        self._dot_x = (x[None, :] + np.linspace(-0.3, 0.3, m)[:, None]).reshape(-1)
        self._dots = ax.scatter(
            self._dot_x,
            np.zeros(m * d_v),
            color=np.repeat(colours, d_v, axis=0),
            edgecolor="white",
            lw=0.4,
            zorder=3,
        )
        self._output_texts = SpriteTexts(ax, MIN_FONT_PT)
        ax.set_xticks(x, features or [f"{c}" for c in range(d_v)])  # else counted from 0
        ax.set_xlim(-0.6, d_v - 0.4)
        ax.set_xlabel(tr("feature of the value vectors"))
        ax.set_title(
            tr("grey bars: $o_i = \\Sigma_j\\, a_{ij} v_j$;   dots: $v_j$, sized by $a_{ij}$"),
            fontsize=10,
        )
        handles = [
            matplotlib.lines.Line2D([], [], ls="", marker="o", ms=7, color=colour, label=label)
            for colour, label in zip(colours, cols, strict=True)
        ]
        ax.legend(
            handles=handles, loc="center left", bbox_to_anchor=(1.01, 0.5), fontsize=MIN_FONT_PT,
            title=tr("key j"),
        )  # fmt: skip
        self._output_ticks = self._scaled_y_axis(ax)
        changing += [*self._output_ticks, *self._output_bars, self._dots]
        changing += [self._output_texts, ax.axhline(0, color="black", lw=0.6)]

        self._title = figure.text(0.5, 0.95, "", ha="center", va="center", fontsize=11)
        changing.append(self._title)
        self.changing(*changing, replace=True)  # a new layout: a new background
        self._structure = (tuple(rows), tuple(cols), d_v, features)

    @staticmethod
    def _bar_panel(ax, labels: list[str], colours: list) -> tuple[list, list]:
        x = np.arange(len(labels))
        bars = list(ax.bar(x, np.zeros(len(labels)), 0.7, color=colours))
        texts = SpriteTexts(ax, MIN_FONT_PT)
        ax.set_xticks(x, labels)
        ax.tick_params(axis="x", length=0)
        return bars, texts

    @staticmethod
    def _scaled_y_axis(ax) -> list:
        """A fixed axis from -1 to 1 whose tick labels are texts that draw() rewrites.

        The scores and the values are drawn divided by their panel's limit L, and the ends of
        the axis say -L and L (the 0 in the middle never changes). Real tick labels would
        change with L and force the whole background to be rendered again; two texts are
        cheap to repaint.
        """
        ax.set_ylim(-1, 1)
        ax.set_yticks(TICK_FRACTIONS, ["0" if y == 0 else "" for y in TICK_FRACTIONS])
        size = ax.yaxis.get_major_ticks()[0].label1.get_fontsize()
        place = ax.get_yaxis_transform()  # x in axes fractions, y in data
        return [
            ax.text(-0.03, y, "", transform=place, ha="right", va="center", fontsize=size)
            for y in LABELLED_FRACTIONS
        ]

    # -- updating (every draw) -----------------------------------------------------------
    def draw(
        self,
        scores,
        weights,
        values,
        query: int,
        row_labels: Sequence | None = None,
        col_labels: Sequence | None = None,
        *,
        title: str | None = None,
        feature_names: Sequence[str] | None = None,
    ) -> Figure:
        """Show scores (n, m), weights (n, m) and values (m, d_v) for query row `query`;
        `feature_names` label the value features (default: their numbers from 0)."""
        scores = _matrix("scores", scores)
        weights = _matrix("weights", weights)
        values = _matrix("values", values)
        if weights.shape != scores.shape:
            raise ValueError(
                tr(
                    "weights must have the shape of scores {scores_shape}, got {weights_shape}",
                    scores_shape=scores.shape,
                    weights_shape=weights.shape,
                )
            )
        n, m = weights.shape
        if values.shape[0] != m:
            raise ValueError(
                tr(
                    "values must have one row per key: {m} rows for weights {weights_shape}, got "
                    "{values_shape}",
                    m=m,
                    weights_shape=weights.shape,
                    values_shape=values.shape,
                )
            )
        if not 1 <= m <= MAX_KEYS or not 1 <= values.shape[1] <= MAX_FEATURES:
            raise ValueError(
                tr(
                    "this figure shows 1 to {MAX_KEYS} keys and 1 to {MAX_FEATURES} value "
                    "features, got {m} keys and {features} features",
                    MAX_KEYS=MAX_KEYS,
                    MAX_FEATURES=MAX_FEATURES,
                    m=m,
                    features=values.shape[1],
                )
            )
        check_row_index("query", query, n)
        rows = check_labels("row_labels", row_labels, n)
        cols = check_labels("col_labels", col_labels, m)
        features = () if feature_names is None else tuple(map(str, feature_names))
        if features and len(features) != values.shape[1]:
            raise ValueError(
                tr(
                    "feature_names must name the {d_v} value features, got {count}",
                    d_v=values.shape[1],
                    count=len(features),
                )
            )
        if self._structure != (tuple(rows), tuple(cols), values.shape[1], features):
            self._build(rows, cols, values.shape[1], features)

        score_row, weight_row = scores[query], weights[query]
        output = weight_row @ values
        # From whole matrices, so that the axes stay put when another query is picked.
        score_limit = nice_limit(np.abs(scores).max())
        value_limit = nice_limit(np.abs(values).max())
        for ticks, limit in ((self._score_ticks, score_limit), (self._output_ticks, value_limit)):
            for text, fraction in zip(ticks, LABELLED_FRACTIONS, strict=True):
                text.set_text(f"{fraction * limit:g}")

        self._image.set_data(weights)
        texts = [f"{weight:.2f}" for weight in weights.ravel()]
        self._cells.set_cells(texts, cell_text_colours(self._image, weights).ravel())
        self._row_box.set_y(query - 0.5)
        self._set_bars(self._score_bars, self._score_texts, score_row, score_limit)
        self._set_bars(self._weight_bars, self._weight_texts, weight_row, 1.0)
        # o_i's values in a row along the top: the dots v_j crowd the ends of the bars
        self._set_bars(self._output_bars, self._output_texts, output, value_limit, row=0.96)
        self._dots.set_offsets(np.column_stack([self._dot_x, values.reshape(-1) / value_limit]))
        self._dots.set_sizes(np.repeat(4 + 300 * weight_row, values.shape[1]))
        title = title if title is not None else tr("query i = {token}", token=rows[query])
        self._title.set_text(title)
        return self.figure

    @staticmethod
    def _set_bars(bars, texts, values: np.ndarray, limit: float, row: float | None = None):
        """Bars of height value / limit (on an axis from -limit to limit), labelled by value:
        each label just beyond its bar's end, or all in one row at height `row` (where dots
        spread around the bars would cover a label at the bar's end)."""
        heights = values / limit
        for bar, height in zip(bars, heights, strict=True):
            bar.set_height(height)
        if row is None:  # above a positive bar, below a negative one
            at = heights + np.where(heights >= 0, 0.03, -0.03)
            anchors = ["bottom" if height >= 0 else "top" for height in heights]
        else:
            at, anchors = np.full(len(values), row), ["top"] * len(values)
        ends = np.column_stack([np.arange(len(values)), at])
        texts.set_texts(ends, [f"{value:.2f}" for value in values], "black", anchors)

    def png(self) -> bytes:
        """The current figure as PNG bytes: the changing artists painted over the background,
        which is rendered again only after a new layout or a full render of the figure."""
        if self._structure is None:
            raise RuntimeError(tr("nothing drawn yet: call draw(...) first"))
        return super().png()

    def shows(self):
        return self._structure


@course_font
def attention_step_figure(*args, **kwargs) -> Figure:
    """A new Figure of one query's attention step, with AttentionStepCanvas.draw's arguments
    (scores, weights, values, query, row_labels, col_labels, title); see the class for the
    panels. `o_i` is computed as weights[query] @ values. Show it with `show_figure(fig)`.
    """
    return AttentionStepCanvas(blit=False).draw(*args, **kwargs)
