"""Attention heatmaps: rows are queries, columns are keys (notebooks 00-07)."""

from __future__ import annotations

from collections.abc import Sequence

import matplotlib
import numpy as np
from matplotlib.figure import Figure

from ..support.language import tr
from .canvas import (
    DPI,
    MASKED_COLOUR,
    MIN_FONT_PT,
    BlitCanvas,
    Canvas,
    annotation_fits,
    check_labels,
    check_row_index,
    to_numpy,
)
from .sprite_text import CellNumbers
from .style import BLOCKED, cell_text_colours, course_font


class HeatmapCanvas(BlitCanvas):
    """A heatmap that can be redrawn many times without rebuilding the figure.

    Building a Figure, its axes, colour bar and text artists costs far more than rendering it,
    so a slider-driven widget keeps one canvas and only swaps the data, the labels and the
    annotation strings. A new figure is built only when the matrix changes shape.

    `png()` blits: the frame, the colour bar and the tick labels are rendered once (again only
    when the colour scale changes) and each frame paints just the cells, their numbers
    (cached bitmaps, `CellNumbers`), the row frame and the title over them. An axis whose
    labels have changed once (a padded key, a replaced token) is painted with every frame
    from then on, so that new labels cost no full render. The figure that `draw` returns
    still renders completely anywhere else (show_figure, savefig).
    """

    def __init__(
        self,
        *,
        figsize: tuple[float, float] = (4.6, 3.8),
        dpi: int = DPI,
        cmap: str = "viridis",
        vmin: float | None = 0.0,
        vmax: float | None = 1.0,
        colorbar_label: str | None = None,
        log_scale: bool = False,
    ):
        super().__init__(figsize=figsize, dpi=dpi, blit=True)
        self._log_scale = log_scale  # colours on a log scale: for values spanning decades
        self.ax = self.figure.add_subplot()
        self._cmap = matplotlib.colormaps[cmap].with_extremes(bad=MASKED_COLOUR)
        self._vmin, self._vmax = vmin, vmax
        self._colorbar_label = colorbar_label  # None: "attention weight", in the language set
        self._image = None
        self._numbers: CellNumbers | None = None  # None: cells too small to annotate
        self._shape: tuple[int, int] | None = None
        self._row_box = None

    def _build(self, shape: tuple[int, int]) -> None:
        self.figure.clear()  # also resets the margins
        self.figure.subplots_adjust(left=0.17, right=0.86, bottom=0.17, top=0.88)
        self.ax = self.figure.add_subplot()
        n, m = shape
        if self._log_scale:
            norm = matplotlib.colors.LogNorm(vmin=self._vmin or None, vmax=self._vmax)
            self._image = self.ax.imshow(np.ones(shape), cmap=self._cmap, norm=norm, aspect="auto")
        else:
            self._image = self.ax.imshow(
                np.zeros(shape), cmap=self._cmap, vmin=self._vmin, vmax=self._vmax, aspect="auto"
            )
        colorbar = self.figure.colorbar(self._image, ax=self.ax, fraction=0.05, pad=0.03)
        colorbar.set_label(self._colorbar_label or tr("attention weight"))
        self.ax.set_xticks(range(m))
        self.ax.set_yticks(range(n))
        self.ax.set_xlabel(tr("key j (attended to)"))
        self.ax.set_ylabel(tr("query i"))
        self.ax.tick_params(length=0)
        self._numbers = CellNumbers(self.ax, n, m, MIN_FONT_PT) if annotation_fits(
            self.ax, n, m) else None  # fmt: skip
        self._row_box = self.ax.add_patch(
            matplotlib.patches.Rectangle(
                (-0.5, -0.5), m, 1, fill=False, edgecolor="red", linewidth=2, visible=False
            )
        )
        # The spines too: a full render draws them over the image.
        changing = [self._image, self._row_box, *self.ax.spines.values(), self.ax.title]
        changing += [] if self._numbers is None else [self._numbers]
        self.changing(*changing, replace=True)
        self._shape = shape

    def draw(
        self,
        weights,
        row_labels: Sequence | None = None,
        col_labels: Sequence | None = None,
        *,
        masked=None,
        title: str | None = None,
        highlight_row: int | None = None,
        fmt: str = "{:.2f}",
    ) -> Figure:
        """Draw `weights` (n, m); `masked` (n, m) bool is True where a key may not be seen."""
        values = to_numpy(weights)
        if values.ndim != 2:
            raise ValueError(
                tr(
                    "weights must be a 2-D (n, m) matrix, got shape {values_shape}",
                    values_shape=values.shape,
                )
            )
        blocked = np.zeros(values.shape, dtype=bool) if masked is None else to_numpy(masked) != 0
        if blocked.shape != values.shape:
            raise ValueError(
                tr(
                    "masked must have the shape of weights {values_shape}, got {blocked_shape}",
                    values_shape=values.shape,
                    blocked_shape=blocked.shape,
                )
            )
        rows = check_labels("row_labels", row_labels, values.shape[0])
        cols = check_labels("col_labels", col_labels, values.shape[1])
        if highlight_row is not None:
            check_row_index("highlight_row", highlight_row, values.shape[0])
        if values.shape != self._shape:
            self._build(values.shape)
        # NaN or ±inf would silently paint a cell as "masked": show them as such only if asked.
        shown = np.ma.masked_array(np.nan_to_num(values, nan=0.0), mask=blocked)
        self._image.set_data(shown)
        if self._log_scale or self._vmin is None or self._vmax is None:
            visible = values[~blocked & np.isfinite(values)]
            if self._log_scale:
                visible = visible[visible > 0]  # a log scale starts above 0
            low, high = (visible.min(), visible.max()) if visible.size else (1e-6, 1.0)
            fixed_low = self._vmin is not None and not (self._log_scale and self._vmin <= 0)
            self._image.set_clim(
                self._vmin if fixed_low else low,
                high if self._vmax is None else self._vmax,
            )
        self.ax.set_xticklabels(cols)
        self.ax.set_yticklabels(rows)
        self.ax.set_title(title or "")
        if self._numbers is not None:
            colours = cell_text_colours(self._image, values)
            cells = list(zip(values.flat, colours.flat, blocked.flat, strict=True))
            self._numbers.set_cells(
                ["×" if b else fmt.format(v) for v, _, b in cells],
                [BLOCKED if b else c for _, c, b in cells],
            )
        self._row_box.set_visible(highlight_row is not None)
        if highlight_row is not None:
            self._row_box.set_y(highlight_row - 0.5)
        self.follow(self.ax.xaxis, cols)
        self.follow(self.ax.yaxis, rows)
        return self.figure

    def set_axis_labels(self, xlabel: str, ylabel: str) -> None:
        """Name the axes. A y label of one or two characters (層, "layer" in Japanese) stays
        upright beside the axis: turned on its side, a single character reads as a blob."""
        self.ax.set_xlabel(xlabel)
        if len(ylabel.strip()) <= 2:
            # labelpad: clear of the tick labels (h₂), so the two do not read as one word
            self.ax.set_ylabel(ylabel, rotation=0, ha="right", va="center", labelpad=12)
        else:
            self.ax.set_ylabel(ylabel, rotation=90, ha="center", va="bottom")  # the default

    def shows(self):
        return self._image.get_clim()

    def png(self) -> bytes:
        """The current figure as PNG bytes, repainting only what changes between frames."""
        if self._shape is None:
            raise RuntimeError(tr("nothing drawn yet: call draw(...) first"))
        return super().png()


@course_font
def attention_heatmap(
    weights,
    row_labels: Sequence | None = None,
    col_labels: Sequence | None = None,
    *,
    vmin: float | None = 0.0,
    vmax: float | None = 1.0,
    cmap: str = "viridis",
    colorbar_label: str | None = None,
    figsize: tuple[float, float] = (4.6, 3.8),
    **draw_options,
) -> Figure:
    """A new Figure showing an attention matrix: rows are queries, columns are keys.

    Cells are annotated with their value when the matrix is small, masked cells (True in
    `masked`) are drawn grey with a ×, and a colour bar gives the scale. For scores rather
    than weights pass vmin=None, vmax=None (autoscale) and a diverging `cmap`.
    `draw_options` (masked, title, highlight_row, fmt) go to HeatmapCanvas.draw.
    """
    canvas = HeatmapCanvas(
        figsize=figsize, cmap=cmap, vmin=vmin, vmax=vmax, colorbar_label=colorbar_label
    )
    return canvas.draw(weights, row_labels, col_labels, **draw_options)


@course_font
def attention_heatmaps(
    weights,
    labels: Sequence,
    *,
    titles: Sequence[str] | None = None,
    masked=None,
    highlight_row: int | None = None,
    title: str | None = None,
    cell_inches: float = 0.42,
) -> Figure:
    """A new Figure of several attention matrices side by side, one per head: weights
    (h, n, n) on one shared colour scale from 0 to 1, each cell annotated, masked cells
    grey with a ×, and row `highlight_row` framed in every panel."""
    values = to_numpy(weights)
    if values.ndim != 3 or values.shape[1] != values.shape[2]:
        raise ValueError(
            tr(
                "weights must be (h, n, n), one matrix per head, got {values_shape}",
                values_shape=values.shape,
            )
        )
    h, n, _ = values.shape
    labels = check_labels("labels", labels, n, unit=tr("tokens"))
    titles = list(titles) if titles is not None else [tr("head {k}", k=k) for k in range(h)]
    if len(titles) != h:
        raise ValueError(
            tr(
                "titles has {len_titles} entries but there are {h} heads",
                len_titles=len(titles),
                h=h,
            )
        )
    blocked = np.zeros((n, n), dtype=bool) if masked is None else to_numpy(masked) != 0
    side = cell_inches * n + 0.9
    figure = Canvas(figsize=(side * h + 0.6, side + 0.7), dpi=DPI).figure
    axes = figure.subplots(1, h, squeeze=False)[0]
    cmap = matplotlib.colormaps["viridis"].with_extremes(bad=MASKED_COLOUR)
    for k, ax in enumerate(axes):
        shown = np.ma.masked_array(values[k], mask=blocked)
        image = ax.imshow(shown, cmap=cmap, vmin=0.0, vmax=1.0)
        colours = cell_text_colours(image, values[k])
        for i in range(n):
            for j in range(n):
                if blocked[i, j]:
                    ax.text(j, i, "×", ha="center", va="center", fontsize=9, color=BLOCKED)
                else:
                    ax.text(j, i, f"{values[k, i, j]:.2f}", ha="center", va="center",
                            fontsize=9, color=colours[i, j])  # fmt: skip
        ax.set_xticks(range(n), labels, fontsize=9)
        ax.set_yticks(range(n), labels if k == 0 else [""] * n, fontsize=9)
        ax.set_xlabel(tr("key j"), fontsize=9)
        ax.set_title(titles[k], fontsize=10)
        ax.tick_params(length=0)
        if highlight_row is not None:
            ax.add_patch(
                matplotlib.patches.Rectangle(
                    (-0.5, highlight_row - 0.5), n, 1, fill=False, edgecolor="red", linewidth=2
                )
            )
    axes[0].set_ylabel(tr("query i"), fontsize=9)
    figure.colorbar(image, ax=list(axes), fraction=0.02, pad=0.02, label=tr("attention weight"))
    if title:
        figure.suptitle(title, fontsize=11)
    return figure
