"""The multi-head picture in one Figure: a grid of per-head weights, Concat(heads), output.

    top     one small heatmap per head: its weights (n, n), masked keys grey
    bottom  Concat(head_0, ..., head_{n_h-1}) (n, d_model), head boundaries marked,
            and the output after W_O (n, d_model)

Like HeatmapCanvas, a HeadGridCanvas builds its axes, images and colour bars once per layout
(h, n, d_model) and afterwards only swaps data, colour limits, labels and the highlight.
Rendering is what costs most, above all the many tick labels, so `png()` also caches the
rendered static parts (axes, ticks, token labels) and repaints only what a redraw changes
(the images, their cell numbers, the highlight, the value colour bars): matplotlib's
"blitting".

Every cell shows its value where a number of at least MIN_FONT_PT fits: the font is chosen
from the cell size when the layout is built (canvas.cell_font_size, up to CELL_FONT_MAX_PT),
and the numbers are dropped, never shrunk, when the cells are too small.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import matplotlib
import numpy as np
from matplotlib.figure import Figure

from ..multihead import check_divisible
from ..support.language import tr
from .canvas import (
    CELL_MARGIN_PX,
    DPI,
    MASKED_COLOUR,
    MIN_FONT_PT,
    BlitCanvas,
    cell_font_size,
    check_labels,
    to_numpy,
)
from .sprite_text import CellNumbers
from .style import cell_text_colours, course_font

GRID_COLUMNS = 4
HIGHLIGHT = "#d62728"
CELL_FONT_MAX_PT = 11  # larger cell numbers only crowd the picture
TITLE_PT = MIN_FONT_PT + 1


def weight_text(weight: float) -> str:
    """A weight in [0, 1] with two decimals in three characters: .23, and 0 and 1 short."""
    shown = f"{weight:.2f}"
    return {"0.00": "0", "1.00": "1", "-0.00": "0"}.get(shown, shown.removeprefix("0"))


def value_text(value: float) -> str:
    """Any value with two decimals, the leading zero dropped: -.31, .07, 1.25."""
    shown = f"{value:.2f}"
    if shown in ("0.00", "-0.00"):
        return "0"
    return shown.replace("0.", ".", 1) if shown.lstrip("-").startswith("0.") else shown


def _cell_numbers(ax, rows: int, cols: int, size: float | None) -> CellNumbers | None:
    return None if size is None else CellNumbers(ax, rows, cols, size)


def _label_stride(ax, labels: Sequence[str], along: str) -> int:
    """Every how many cells a token label fits along `along` ("x" or "y") at MIN_FONT_PT:
    1 when neighbours do not overlap; otherwise only every stride-th token is labelled."""
    figure = ax.figure
    box = ax.get_position()
    width_px, height_px = figure.get_size_inches() * figure.dpi
    cell = (box.width * width_px if along == "x" else box.height * height_px) / len(labels)
    renderer = figure.canvas.get_renderer()
    probe = ax.text(0, 0, "", fontsize=MIN_FONT_PT)
    extents = []
    for label in labels:
        probe.set_text(label)
        size = probe.get_window_extent(renderer)
        extents.append(size.width if along == "x" else size.height)
    probe.remove()
    for stride in range(1, len(labels)):
        shown = extents[::stride]
        # Neighbouring labels are centred stride cells apart: half of each must fit.
        if all(
            (a + b) / 2 + CELL_MARGIN_PX <= stride * cell
            for a, b in zip(shown, shown[1:], strict=False)
        ):
            return stride
    return max(1, len(labels))


def _symmetric_limit(*arrays: np.ndarray) -> float:
    top = max(float(np.abs(a).max()) if a.size else 0.0 for a in arrays)
    return top if top > 0 else 1.0


class HeadGridCanvas(BlitCanvas):
    """A reusable figure of h per-head heatmaps above Concat(heads) and the output."""

    def __init__(
        self, *, dpi: int = DPI, weights_cmap: str = "viridis", values_cmap: str = "RdBu_r"
    ):
        super().__init__(dpi=dpi, blit=True)
        self._weights_cmap = matplotlib.colormaps[weights_cmap].with_extremes(bad=MASKED_COLOUR)
        self._values_cmap = matplotlib.colormaps[values_cmap]
        self._layout: tuple[int, int, int] | None = None
        self.head_axes: list = []
        self._head_images: list = []
        self.concat_ax = self.output_ax = None
        self._concat_image = self._output_image = None
        self._selected_box = None
        self._frames: list = []
        # The cell numbers of each head, of Concat and of the output (None: cells too small).
        self.head_numbers: list[CellNumbers | None] = []
        self.concat_numbers: CellNumbers | None = None
        self.output_numbers: CellNumbers | None = None
        self._labelled: tuple | None = None  # (tokens, title) the axes are labelled with

    @property
    def layout(self) -> tuple[int, int, int] | None:
        """(h, n, d_model) of the figure as built."""
        return self._layout

    # -- building (once per layout h, n, d_model) ------------------------------------------
    def _build(self, h: int, n: int, d_model: int) -> None:
        self.figure.clear()
        columns = min(max(h, 2), GRID_COLUMNS)  # one head takes half the width, not all
        rows = math.ceil(h / columns)
        self.figure.set_size_inches(8.4, 1.9 * rows + 2.9)
        grid = self.figure.add_gridspec(
            rows + 1, 2 * columns, height_ratios=[1.0] * rows + [1.25], left=0.09, right=0.93,
            bottom=0.08, top=0.9 - 0.05 / rows, hspace=0.55, wspace=0.5,
        )  # fmt: skip
        self._build_heads(grid, h, n, columns)
        boundaries = self._build_values(grid, rows, columns, h, n, d_model)
        # Cell numbers, in a font chosen from the cell size now that the layout is final.
        head_size = cell_font_size(self.head_axes[0], n, n, ".00", largest=CELL_FONT_MAX_PT)
        self.head_numbers = [_cell_numbers(ax, n, n, head_size) for ax in self.head_axes]
        value_size = cell_font_size(self.concat_ax, n, d_model, "-0.00", largest=CELL_FONT_MAX_PT)
        self.concat_numbers = _cell_numbers(self.concat_ax, n, d_model, value_size)
        self.output_numbers = _cell_numbers(self.output_ax, n, d_model, value_size)
        numbers = [*self.head_numbers, self.concat_numbers, self.output_numbers]
        images_axes = (*self.head_axes, self.concat_ax, self.output_ax)
        self.changing(
            *self._head_images, self._concat_image, self._output_image,
            *(artist for artist in numbers if artist is not None),
            *(spine for ax in images_axes for spine in ax.spines.values()),
            *boundaries, *(ax.title for ax in self.head_axes), *self._frames,
            self._selected_box, replace=True,
        )  # fmt: skip
        self._labelled = None
        self._layout = (h, n, d_model)

    def _build_heads(self, grid, h: int, n: int, columns: int) -> None:
        """One heatmap per head, a red frame to mark the selected one, one colour bar."""
        self.head_axes, self._head_images, self._frames = [], [], []
        self._x_labelled, self._y_labelled = [], []  # the head axes that carry token labels
        for i in range(h):
            row, column = divmod(i, columns)
            ax = self.figure.add_subplot(grid[row, 2 * column : 2 * column + 2])
            image = ax.imshow(
                np.zeros((n, n)), cmap=self._weights_cmap, vmin=0.0, vmax=1.0, aspect="auto",
                interpolation="nearest",
            )  # fmt: skip
            # Tokens label the left column and the bottom row of heads only: text is what
            # makes a redraw slow, and the grid shares its axes.
            if i + columns >= h:
                self._x_labelled.append(ax)
                ax.set_xlabel(tr("key j"), fontsize=MIN_FONT_PT, labelpad=3)
            if column == 0:
                self._y_labelled.append(ax)
                ax.set_ylabel(tr("query i"), fontsize=MIN_FONT_PT, labelpad=4)
            ax.tick_params(length=0, labelsize=MIN_FONT_PT)
            ax.set_title(tr("head {k}", k=i), fontsize=TITLE_PT)
            frame = matplotlib.patches.Rectangle(
                (0, 0), 1, 1, transform=ax.transAxes, fill=False, edgecolor=HIGHLIGHT,
                linewidth=4, clip_on=False, visible=False,
            )  # fmt: skip
            ax.add_patch(frame)
            self.head_axes.append(ax)
            self._head_images.append(image)
            self._frames.append(frame)
        colorbar = self.figure.colorbar(
            self._head_images[0], ax=self.head_axes, fraction=0.025, pad=0.02
        )
        colorbar.set_label(tr("weight"), fontsize=MIN_FONT_PT)
        colorbar.ax.tick_params(labelsize=MIN_FONT_PT)

    def _build_values(self, grid, rows: int, columns: int, h: int, n: int, d_model: int) -> list:
        """Concat(heads) with each head's features marked, and the output after W_O; returns
        the lines between the heads' features."""
        self.concat_ax = self.figure.add_subplot(grid[rows, :columns])
        self.output_ax = self.figure.add_subplot(grid[rows, columns:])
        images = []
        for ax in (self.concat_ax, self.output_ax):
            image = ax.imshow(
                np.zeros((n, d_model)), cmap=self._values_cmap, aspect="auto",
                interpolation="nearest",
            )  # fmt: skip
            ax.set_xlabel(tr("feature"), fontsize=MIN_FONT_PT)
            ax.tick_params(length=0, labelsize=MIN_FONT_PT)
            bar = self.figure.colorbar(image, ax=ax, fraction=0.05, pad=0.02)
            bar.ax.tick_params(labelsize=MIN_FONT_PT)
            images.append(image)
        self._concat_image, self._output_image = images
        self._y_labelled.append(self.concat_ax)
        self.output_ax.set_yticks([])  # same rows as Concat, on its left
        features = [str(j) for j in range(d_model)]
        stride = _label_stride(self.output_ax, features, "x")
        self.output_ax.set_xticks(range(0, d_model, stride), features[::stride])
        d_head = d_model // h
        boundaries = [
            self.concat_ax.axvline(boundary * d_head - 0.5, color="black", linewidth=1.2)
            for boundary in range(1, h)
        ]
        self.concat_ax.set_xticks([(i + 0.5) * d_head - 0.5 for i in range(h)])
        self.concat_ax.set_xticklabels([str(i) for i in range(h)])
        self.concat_ax.set_xlabel(tr("head (its $d_{head}$ features)"), fontsize=MIN_FONT_PT)
        self._selected_box = self.concat_ax.add_patch(
            matplotlib.patches.Rectangle(
                (-0.5, -0.5), d_head, n, fill=False, edgecolor=HIGHLIGHT, linewidth=2.5
            )
        )
        self.concat_ax.set_title(
            r"$\mathrm{Concat}(\mathrm{head}_0, \ldots, \mathrm{head}_{n_h-1})$", fontsize=TITLE_PT
        )
        self.output_ax.set_title(tr("output = Concat(…) $W_O$"), fontsize=TITLE_PT)
        return boundaries

    # -- drawing (every redraw) -------------------------------------------------------------
    def draw(
        self,
        head_weights,
        concat,
        output,
        tokens: Sequence | None = None,
        *,
        masked=None,
        selected: int | None = None,
        title: str | None = None,
    ) -> Figure:
        """head_weights (h, n, n); concat and output (n, d_model); masked (n, n) bool is True
        where a key is blocked (the same for every head); selected is the head to frame."""
        weights, concat, output, blocked, labels = _checked(
            head_weights, concat, output, tokens, masked, selected
        )
        h, n, _ = weights.shape
        d_model = concat.shape[1]
        if self._layout != (h, n, d_model):
            self._build(h, n, d_model)
        self._draw_heads(weights, blocked, selected)
        self._draw_values(concat, output, selected, d_model // h)
        if (tuple(labels), title or "") != self._labelled:
            self._label(labels, title)
        return self.figure

    def _draw_heads(self, weights, blocked, selected) -> None:
        for i, (ax, image) in enumerate(zip(self.head_axes, self._head_images, strict=True)):
            image.set_data(np.where(blocked, np.nan, weights[i]))  # NaN: the 'bad' colour
            ax.title.set_color(HIGHLIGHT if i == selected else "black")
            self._frames[i].set_visible(i == selected)
            if self.head_numbers[i] is not None:
                self.head_numbers[i].set_cells(
                    ["" if hidden else weight_text(w) for w, hidden in zip(
                        weights[i].ravel(), blocked.ravel(), strict=True)],
                    cell_text_colours(image, weights[i]).ravel(),
                )  # fmt: skip

    def _draw_values(self, concat, output, selected, d_head: int) -> None:
        for image, values, numbers in (
            (self._concat_image, concat, self.concat_numbers),
            (self._output_image, output, self.output_numbers),
        ):
            limit = _symmetric_limit(values)
            image.set_data(values)
            image.set_clim(-limit, limit)
            if numbers is not None:
                texts = [value_text(v) for v in values.ravel()]
                numbers.set_cells(texts, cell_text_colours(image, values).ravel())
        self._selected_box.set_visible(selected is not None)
        if selected is not None:
            self._selected_box.set_x(selected * d_head - 0.5)

    def _label(self, labels: list[str], title: str | None) -> None:
        """The token labels (every stride-th where they would overlap) and the title: in the
        background, which shows() keys on them."""
        for ax in self.head_axes:
            ax.set_xticks([])
            ax.set_yticks([])
        for axes, along in ((self._x_labelled, "x"), (self._y_labelled, "y")):
            for ax in axes:
                stride = _label_stride(ax, labels, along)
                ticks = range(0, len(labels), stride)
                setter = ax.set_xticks if along == "x" else ax.set_yticks
                setter(list(ticks), [labels[i] for i in ticks])
        self.figure.suptitle(title or "", fontsize=TITLE_PT + 1, y=0.99)
        self._labelled = (tuple(labels), title or "")

    def shows(self):
        # The value bars stay in the background: their ticks follow the colour limits.
        limits = (self._concat_image.get_clim(), self._output_image.get_clim())
        return (self._labelled, limits)


def _checked(head_weights, concat, output, tokens, masked, selected):
    """HeadGridCanvas.draw's arguments, checked: (weights, concat, output, blocked, labels)."""
    weights = to_numpy(head_weights)
    if weights.ndim != 3 or weights.shape[1] != weights.shape[2]:
        raise ValueError(
            tr(
                "head_weights must be (h, n, n), one square matrix per head, got shape "
                "{weights_shape}",
                weights_shape=weights.shape,
            )
        )
    h, n, _ = weights.shape
    concat, output = to_numpy(concat), to_numpy(output)
    for name, values in (("concat", concat), ("output", output)):
        if values.ndim != 2 or values.shape[0] != n:
            raise ValueError(
                tr(
                    "{name} must be (n, d_model) with n={n}, got {values_shape}",
                    name=name,
                    n=n,
                    values_shape=values.shape,
                )
            )
    if concat.shape != output.shape:
        raise ValueError(
            tr(
                "concat and output must have the same shape (n, d_model), got {concat_shape} "
                "and {output_shape}",
                concat_shape=concat.shape,
                output_shape=output.shape,
            )
        )
    check_divisible(concat.shape[1], h)
    blocked = np.zeros((n, n), dtype=bool) if masked is None else to_numpy(masked) != 0
    if blocked.shape != (n, n):
        raise ValueError(
            tr("masked must be ({n}, {n}), got {blocked_shape}", n=n, blocked_shape=blocked.shape)
        )
    if selected is not None and not 0 <= selected < h:
        raise ValueError(
            tr(
                "selected must be a head index in [0, {last_head}], got {selected}",
                last_head=h - 1,
                selected=selected,
            )
        )
    return weights, concat, output, blocked, check_labels("tokens", tokens, n, unit=tr("tokens"))


@course_font
def head_grid_figure(head_weights, concat, output, tokens=None, **kwargs) -> Figure:
    """A new Figure of per-head weights, Concat(heads) and output; see HeadGridCanvas.draw."""
    return HeadGridCanvas().draw(head_weights, concat, output, tokens, **kwargs)
