"""The multi-head picture in one Figure: a grid of per-head weights, Concat(heads), output.

    top     one small heatmap per head: its weights (n, n), masked keys grey
    bottom  Concat(head_1, ..., head_h) (n, d_model), head boundaries marked,
            and the output after W_O (n, d_model)

Like HeatmapCanvas, a HeadGridCanvas builds its axes, images and colour bars once per layout
(h, n, d_model) and afterwards only swaps data, colour limits, labels and the highlight.
Rendering is what costs most, above all the many tick labels, so `png()` also caches the
rendered static parts (axes, ticks, token labels) and repaints only what a redraw changes
(the images, the highlight, the value colour bars): matplotlib's "blitting".
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import matplotlib
import numpy as np
from matplotlib.figure import Figure

from .canvas import MASKED_COLOUR, Blitter, Canvas, check_labels, pixels_to_png, to_numpy

GRID_COLUMNS = 4
HIGHLIGHT = "#d62728"


def _symmetric_limit(*arrays: np.ndarray) -> float:
    top = max(float(np.abs(a).max()) if a.size else 0.0 for a in arrays)
    return top if top > 0 else 1.0


class HeadGridCanvas(Canvas):
    """A reusable figure of h per-head heatmaps above Concat(heads) and the output."""

    def __init__(
        self, *, dpi: int = 72, weights_cmap: str = "viridis", values_cmap: str = "RdBu_r"
    ):
        super().__init__(dpi=dpi)
        self._weights_cmap = matplotlib.colormaps[weights_cmap].with_extremes(bad=MASKED_COLOUR)
        self._values_cmap = matplotlib.colormaps[values_cmap]
        self._layout: tuple[int, int, int] | None = None
        self.head_axes: list = []
        self._head_images: list = []
        self.concat_ax = self.output_ax = None
        self._concat_image = self._output_image = None
        self._selected_box = None
        self._frames: list = []
        self._dynamic: list = []  # artists that png() repaints over the cached background
        self._blitter = Blitter(self.canvas)
        self._static: tuple | None = None  # (labels, title) the background was drawn with

    @property
    def layout(self) -> tuple[int, int, int] | None:
        """(h, n, d_model) of the figure as built."""
        return self._layout

    def _build(self, h: int, n: int, d_model: int) -> None:
        self.figure.clear()
        columns = min(h, GRID_COLUMNS)
        rows = math.ceil(h / columns)
        self.figure.set_size_inches(8.4, 1.9 * rows + 2.9)
        grid = self.figure.add_gridspec(
            rows + 1,
            2 * columns,
            height_ratios=[1.0] * rows + [1.25],
            left=0.09,
            right=0.93,
            bottom=0.08,
            top=0.9 - 0.05 / rows,
            hspace=0.55,
            wspace=0.5,
        )
        self.head_axes, self._head_images, self._frames = [], [], []
        for i in range(h):
            row, column = divmod(i, columns)
            ax = self.figure.add_subplot(grid[row, 2 * column : 2 * column + 2])
            image = ax.imshow(
                np.zeros((n, n)),
                cmap=self._weights_cmap,
                vmin=0.0,
                vmax=1.0,
                aspect="auto",
                interpolation="nearest",
            )
            # Tokens label the left column and the bottom row of heads only: text is what
            # makes a redraw slow, and the grid shares its axes.
            ax.set_xticks(range(n) if i + columns >= h else [])
            ax.set_yticks(range(n) if column == 0 else [])
            ax.tick_params(length=0, labelsize=7)
            ax.set_title(f"head {i + 1}", fontsize=9)
            frame = matplotlib.patches.Rectangle(
                (0, 0),
                1,
                1,
                transform=ax.transAxes,
                fill=False,
                edgecolor=HIGHLIGHT,
                linewidth=4,
                clip_on=False,
                visible=False,
            )
            ax.add_patch(frame)
            self.head_axes.append(ax)
            self._head_images.append(image)
            self._frames.append(frame)
        colorbar = self.figure.colorbar(
            self._head_images[0], ax=self.head_axes, fraction=0.025, pad=0.02
        )
        colorbar.set_label("weight", fontsize=8)
        colorbar.ax.tick_params(labelsize=7)
        self.concat_ax = self.figure.add_subplot(grid[rows, :columns])
        self.output_ax = self.figure.add_subplot(grid[rows, columns:])
        images, value_bars = [], []
        for ax in (self.concat_ax, self.output_ax):
            image = ax.imshow(
                np.zeros((n, d_model)),
                cmap=self._values_cmap,
                aspect="auto",
                interpolation="nearest",
            )
            ax.set_xlabel("feature", fontsize=8)
            ax.tick_params(length=0, labelsize=7)
            bar = self.figure.colorbar(image, ax=ax, fraction=0.05, pad=0.02)
            bar.ax.tick_params(labelsize=7)
            images.append(image)
            value_bars.append(bar.ax)
        self._concat_image, self._output_image = images
        self.concat_ax.set_yticks(range(n))
        self.output_ax.set_yticks([])  # same rows as Concat, on its left
        d_head = d_model // h
        boundaries = [
            self.concat_ax.axvline(boundary * d_head - 0.5, color="black", linewidth=1.2)
            for boundary in range(1, h)
        ]
        self.concat_ax.set_xticks([(i + 0.5) * d_head - 0.5 for i in range(h)])
        self.concat_ax.set_xticklabels([str(i + 1) for i in range(h)])
        self.concat_ax.set_xlabel("head (its d_head features)", fontsize=8)
        self._selected_box = self.concat_ax.add_patch(
            matplotlib.patches.Rectangle(
                (-0.5, -0.5), d_head, n, fill=False, edgecolor=HIGHLIGHT, linewidth=2.5
            )
        )
        images_axes = (self.concat_ax, self.output_ax)
        self.concat_ax.set_title("Concat(head_1, …, head_h)", fontsize=9)
        self.output_ax.set_title("output = Concat(…) W_O", fontsize=9)
        # In drawing order: whatever lies on top of an image is repainted after it.
        self._dynamic = [
            *self._head_images,
            *images,
            *(spine for ax in (*self.head_axes, *images_axes) for spine in ax.spines.values()),
            *boundaries,
            *(ax.title for ax in self.head_axes),
            *self._frames,
            self._selected_box,
            *value_bars,  # their ticks follow the colour limits
        ]
        self._static = None
        self._blitter.forget()
        self._layout = (h, n, d_model)

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
        weights = to_numpy(head_weights)
        if weights.ndim != 3 or weights.shape[1] != weights.shape[2]:
            raise ValueError(
                f"head_weights must be (h, n, n), one square matrix per head, got shape "
                f"{weights.shape}"
            )
        h, n, _ = weights.shape
        concat, output = to_numpy(concat), to_numpy(output)
        for name, values in (("concat", concat), ("output", output)):
            if values.ndim != 2 or values.shape[0] != n:
                raise ValueError(f"{name} must be (n, d_model) with n={n}, got {values.shape}")
        if concat.shape != output.shape:
            raise ValueError(
                f"concat and output must have the same shape (n, d_model), got {concat.shape} "
                f"and {output.shape}"
            )
        d_model = concat.shape[1]
        if d_model % h:
            raise ValueError(f"d_model={d_model} of concat is not divisible by h={h} heads")
        blocked = np.zeros((n, n), dtype=bool) if masked is None else to_numpy(masked) != 0
        if blocked.shape != (n, n):
            raise ValueError(f"masked must be ({n}, {n}), got {blocked.shape}")
        if selected is not None and not 0 <= selected < h:
            raise ValueError(f"selected must be a head index in [0, {h - 1}], got {selected}")
        labels = check_labels("tokens", tokens, n, unit="tokens")
        if self._layout != (h, n, d_model):
            self._build(h, n, d_model)
        for i, (ax, image) in enumerate(zip(self.head_axes, self._head_images, strict=True)):
            image.set_data(np.where(blocked, np.nan, weights[i]))  # NaN: the 'bad' colour
            ax.title.set_color(HIGHLIGHT if i == selected else "black")
            self._frames[i].set_visible(i == selected)
        limit = _symmetric_limit(concat)
        self._concat_image.set_data(concat)
        self._concat_image.set_clim(-limit, limit)
        limit = _symmetric_limit(output)
        self._output_image.set_data(output)
        self._output_image.set_clim(-limit, limit)
        self._selected_box.set_visible(selected is not None)
        if selected is not None:
            self._selected_box.set_x(selected * (d_model // h) - 0.5)
        static = (tuple(labels), title or "")
        if static != self._static:  # the cached background shows old labels: draw it again
            for ax in self.head_axes:
                if ax.get_xticks().size:
                    ax.set_xticklabels(labels)
                if ax.get_yticks().size:
                    ax.set_yticklabels(labels)
            self.concat_ax.set_yticklabels(labels)
            self.figure.suptitle(title or "", fontsize=10, y=0.99)
            self._static = static
            self._blitter.forget()
        return self.figure

    def png(self) -> bytes:
        """The figure as PNG bytes: the cached static background plus a fresh paint of the
        parts that change. The Figure itself stays complete (figure_to_png works on it)."""
        for artist in self._dynamic:
            artist.set_animated(True)  # left out of the background
        try:
            if not self._blitter.ready:
                self._blitter.render()
                self._blitter.save("figure")
            self._blitter.paint("figure", self._dynamic)
            pixels = self._blitter.pixels().copy()
        finally:
            for artist in self._dynamic:
                artist.set_animated(False)
        return pixels_to_png(pixels)


def head_grid_figure(head_weights, concat, output, tokens=None, **kwargs) -> Figure:
    """A new Figure of per-head weights, Concat(heads) and output; see HeadGridCanvas.draw."""
    return HeadGridCanvas().draw(head_weights, concat, output, tokens, **kwargs)
