"""The embedding step drawn as one equation of matrices: U · W_e + W_p = h_0.

Each matrix is a heatmap with its cells drawn square at one common size, so the shapes line
up the way the product does: U is (n, n_vocab), W_e is (n_vocab, d), W_p and h_0 are (n, d). Every
position of the sentence gets a colour; its one in U, the row of W_e that this one selects
and the resulting row of h_0 are outlined in that colour, and the rows of W_e that no token
selects are faded. Like HeatmapCanvas, an EmbeddingCanvas keeps its artists between draws and
rebuilds only when n, n_vocab or d change.

Its `png()` blits. W_e, W_p, their numbers and every fixed label are rendered once into a
background (again only when W_e, W_p, the vocabulary or the title change); a redraw paints
only what a change of tokens moves: U, h_0, the outlines, the fade over W_e and the row
labels. W_e's numbers sit under the fade, so fading needs no redraw of them, and the colour
scale is set by the largest |h_0| any choice of tokens could give, so it too stays fixed.
"""

from __future__ import annotations

from collections.abc import Sequence

import matplotlib
import numpy as np
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

from ..support.language import tr
from .canvas import (
    DPI,
    MASKED_COLOUR,
    MIN_FONT_PT,
    BlitCanvas,
    annotation_fits,
    to_numpy,
)
from .sprite_text import CellNumbers
from .style import course_font

POSITION_COLOURS = ("#d62728", "#ff7f0e", "#2ca02c", "#9467bd", "#17becf", "#8c564b", "#e377c2")
FADE_ALPHA = 0.7  # how much the rows of W_e that no token selects are washed out


def _check_inputs(ids, W_e, W_p, vocab) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[str]]:
    ids_array = to_numpy(ids)
    if ids_array.ndim != 1 or ids_array.size < 1:
        raise ValueError(
            tr(
                "ids must be a 1-D sequence of n >= 1 token ids, got {ids_array_shape}",
                ids_array_shape=ids_array.shape,
            )
        )
    if not np.array_equal(ids_array, np.round(ids_array)):
        raise ValueError(
            tr(
                "ids must hold integer token ids, got {ids}",
                ids=ids_array.tolist(),
            )
        )
    ids_array = ids_array.astype(int)
    W_e, W_p = to_numpy(W_e), to_numpy(W_p)
    if W_e.ndim != 2:
        raise ValueError(
            tr("W_e must be a 2-D (n_vocab, d) matrix, got shape {W_e_shape}", W_e_shape=W_e.shape)
        )
    n_vocab, d = W_e.shape
    if ids_array.min() < 0 or ids_array.max() >= n_vocab:
        raise ValueError(
            tr(
                "ids must lie in [0, n_vocab={n_vocab}) (rows of W_e), got {ids}",
                n_vocab=n_vocab,
                ids=ids_array.tolist(),
            )
        )
    if W_p.ndim != 2 or W_p.shape[1] != d or W_p.shape[0] < ids_array.size:
        raise ValueError(
            tr(
                "W_p must be a 2-D (n_ctx, d={d}) matrix with n_ctx >= n={ids_array_size} "
                "positions, got shape {W_p_shape}",
                d=d,
                ids_array_size=ids_array.size,
                W_p_shape=W_p.shape,
            )
        )
    labels = [str(token) for token in vocab]
    if len(labels) != n_vocab:
        raise ValueError(
            tr(
                "vocab has {len_labels} tokens but W_e has n_vocab={n_vocab} rows",
                len_labels=len(labels),
                n_vocab=n_vocab,
            )
        )
    return ids_array, W_e, W_p[: ids_array.size], labels


class EmbeddingCanvas(BlitCanvas):
    """U · W_e + W_p = h_0 as four heatmaps in one figure, redrawn without rebuilding."""

    def __init__(
        self, *, figsize: tuple[float, float] = (11.0, 3.6), dpi: int = DPI, cmap: str = "RdBu_r"
    ):
        super().__init__(figsize=figsize, dpi=dpi, blit=True)
        self._one_hot_cmap = matplotlib.colormaps["Blues"]
        self._cmap = matplotlib.colormaps[cmap].with_extremes(bad=MASKED_COLOUR)
        self._shape: tuple[int, int, int] | None = None
        self._showing: tuple | None = None  # what the background depends on, as drawn now

    def _build(self, n: int, n_vocab: int, d: int) -> None:
        self.figure.clear()
        operator_width = 2.4  # room for the row labels of the next matrix
        grid = self.figure.add_gridspec(
            1,
            7,
            width_ratios=[n_vocab, operator_width, d, operator_width, d, operator_width, d],
            left=0.07,
            right=0.99,
            bottom=0.12,
            top=0.8,
            wspace=0.05,
        )
        axes = [self.figure.add_subplot(grid[0, k]) for k in range(0, 7, 2)]
        self.ax_U, self.ax_W_e, self.ax_W_p, self.ax_h0 = axes
        self._operators = []
        for k, symbol in zip((1, 3, 5), (r"$\cdot$", "+", "="), strict=True):
            ax = self.figure.add_subplot(grid[0, k])
            ax.set_axis_off()
            self._operators.append(ax.text(0.2, 0.5, symbol, ha="center", va="center", size=22))
        shapes = {
            self.ax_U: (n, n_vocab),
            self.ax_W_e: (n_vocab, d),
            self.ax_W_p: (n, d),
            self.ax_h0: (n, d),
        }
        self._images, self._texts = {}, {}
        for ax, shape in shapes.items():
            cmap = self._one_hot_cmap if ax is self.ax_U else self._cmap
            self._images[ax] = ax.imshow(np.zeros(shape), cmap=cmap, aspect="equal")
            ax.set_anchor("N")
            ax.tick_params(length=0, labelsize=MIN_FONT_PT)
            ax.set_xticks(range(shape[1]))
            ax.set_yticks(range(shape[0]))
            self._texts[ax] = None  # None: cells too small to annotate
            if annotation_fits(ax, *shape, sample="-0.0"):
                self._texts[ax] = CellNumbers(ax, *shape, MIN_FONT_PT)
                # W_e's numbers lie under its fade (zorder 2), which washes out unselected rows.
                self._texts[ax].set_zorder(1.5 if ax is self.ax_W_e else 3)
        for ax in (self.ax_W_e, self.ax_W_p, self.ax_h0):
            ax.set_xticklabels([str(j) for j in range(d)], fontsize=MIN_FONT_PT)
        # The rows of U, W_p and h_0 are named after the tokens, which change at every redraw:
        # texts placed where tick labels would be, so that the ticks can stay in the background.
        self._row_labels = {}
        for ax in (self.ax_U, self.ax_W_p, self.ax_h0):
            ax.set_yticklabels([""] * n)
            place = matplotlib.transforms.blended_transform_factory(
                matplotlib.transforms.offset_copy(ax.transAxes, fig=self.figure, x=-3.5,
                                                  units="points"),
                ax.transData,
            )  # fmt: skip
            self._row_labels[ax] = [
                ax.text(0, i, "", transform=place, ha="right", va="center", clip_on=False,
                        fontsize=MIN_FONT_PT, color=POSITION_COLOURS[i % len(POSITION_COLOURS)])
                for i in range(n)
            ]  # fmt: skip
        self._images[self.ax_U].set_clim(0.0, 1.0)
        # The rows of W_e that no position selects are washed out by a white overlay.
        self._fade = self.ax_W_e.imshow(np.zeros((n_vocab, d, 4)), aspect="equal", zorder=2)
        self._boxes = {
            ax: [
                ax.add_patch(Rectangle((0, 0), 1, 1, fill=False, linewidth=2.2, zorder=3))
                for _ in range(n)
            ]
            for ax in (self.ax_U, self.ax_W_e, self.ax_h0)
        }
        # What a change of tokens moves, in the order a full render draws it (by zorder).
        changing = {
            self.ax_U: [self._images[self.ax_U], *self._flat(self.ax_U)],
            self.ax_W_e: [self._fade],
            self.ax_W_p: [],
            self.ax_h0: [self._images[self.ax_h0], *self._flat(self.ax_h0)],
        }
        moving = []
        for ax, artists in changing.items():
            artists += [*self._boxes.get(ax, []), *self._row_labels.get(ax, [])]
            if artists and ax is not self.ax_W_p:
                artists += list(ax.spines.values())  # a full render draws them over the cells
            moving += artists
        self.changing(*moving, replace=True)
        self._shape = (n, n_vocab, d)

    def _flat(self, ax) -> list:
        return [] if self._texts[ax] is None else [self._texts[ax]]

    def draw(
        self,
        ids,
        W_e,
        W_p,
        vocab: Sequence,
        *,
        position_labels: Sequence | None = None,
        positions: bool = True,
        title: str | None = None,
        fmt: str = "{:.1f}",
    ) -> Figure:
        """Draw U (one-hot rows of `ids`), W_e (n_vocab, d), W_p[:n] and h_0 = U W_e (+ W_p[:n] when
        `positions`). `vocab` names the n_vocab rows of W_e; `position_labels` the n rows of U."""
        ids, W_e, W_p, vocab = _check_inputs(ids, W_e, W_p, vocab)
        n, (n_vocab, d) = ids.size, W_e.shape
        rows = [vocab[t] for t in ids] if position_labels is None else list(position_labels)
        if len(rows) != n:
            raise ValueError(
                tr(
                    "position_labels has {len_rows} labels but there are n={n} ids",
                    len_rows=len(rows),
                    n=n,
                )
            )
        if self._shape != (n, n_vocab, d):
            self._build(n, n_vocab, d)
        U = np.zeros((n, n_vocab))
        U[np.arange(n), ids] = 1.0
        h0 = U @ W_e + (W_p if positions else 0.0)
        # The largest |h_0| over every choice of tokens: a scale that no token change moves.
        reachable = W_e[None, :, :] + (W_p[:, None, :] if positions else 0.0)
        limit = max(float(np.abs(W_e).max()), float(np.abs(W_p).max()),
                    float(np.abs(reachable).max())) or 1.0  # fmt: skip
        shown_W_p = np.ma.masked_array(W_p, mask=np.full(W_p.shape, not positions))
        for ax, values in ((self.ax_U, U), (self.ax_W_e, W_e), (self.ax_W_p, shown_W_p)):
            self._images[ax].set_data(values)
        self._images[self.ax_h0].set_data(h0)
        for ax in (self.ax_W_e, self.ax_W_p, self.ax_h0):
            self._images[ax].set_clim(-limit, limit)
        self._annotate(self.ax_U, U, "{:.0f}", 0.5)
        self._annotate(self.ax_W_e, W_e, fmt, 0.6 * limit)
        self._annotate(self.ax_W_p, W_p if positions else None, fmt, 0.6 * limit)
        self._annotate(self.ax_h0, h0, fmt, 0.6 * limit)

        fade = np.zeros((n_vocab, d, 4))
        fade[..., :3] = 1.0
        fade[:, :, 3] = FADE_ALPHA
        fade[ids, :, 3] = 0.0
        self._fade.set_data(fade)
        for i, token in enumerate(ids):
            colour = POSITION_COLOURS[i % len(POSITION_COLOURS)]
            for ax, (x, y, width) in (
                (self.ax_U, (token, i, 1)),
                (self.ax_W_e, (0, token, d)),
                (self.ax_h0, (0, i, d)),
            ):
                box = self._boxes[ax][i]
                # A token chosen twice gets nested outlines, one per position, on its W_e row.
                inset = (
                    0.12 * sum(1 for k in range(i) if ids[k] == token) if ax is self.ax_W_e else 0
                )
                box.set_xy((x - 0.5 + inset, y - 0.5 + inset))
                box.set_width(width - 2 * inset)
                box.set_height(1 - 2 * inset)
                box.set_edgecolor(colour)

        self.ax_U.set_xticklabels(vocab, fontsize=MIN_FONT_PT)
        self.ax_W_e.set_yticklabels(vocab, fontsize=MIN_FONT_PT)
        for labels in self._row_labels.values():
            for label, row in zip(labels, rows, strict=True):
                label.set_text(row)
        self.ax_U.set_title(f"$U$  one-hot ({n}×{n_vocab})", fontsize=10)
        self.ax_W_e.set_title(f"$W_e$  ({n_vocab}×{d})", fontsize=10)
        self.ax_W_p.set_title(
            f"$W_p[:{n}]$  ({n}×{d})" if positions else tr("$W_p$  (left out)"),
            fontsize=10,
            color="black" if positions else "#909090",
        )
        self._operators[1].set_color("black" if positions else "#c0c0c0")
        self.ax_h0.set_title("$h_0 = U W_e + W_p$" if positions else "$h_0 = U W_e$", fontsize=10)
        self.figure.suptitle(title or "", fontsize=11)
        self._showing = (tuple(vocab), W_e.tobytes(), W_p.tobytes(), positions, title, fmt)
        return self.figure

    def png(self) -> bytes:
        """The current figure as PNG bytes, repainting only what a change of tokens moves."""
        if self._shape is None:
            raise RuntimeError(tr("nothing drawn yet: call draw(...) first"))
        return super().png()

    def shows(self):
        return self._showing

    def _annotate(self, ax, values, fmt: str, dark_above: float) -> None:
        numbers = self._texts[ax]
        if numbers is None:
            return
        if values is None:
            count = numbers.rows * numbers.cols
            numbers.set_cells([""] * count, ["black"] * count)
            return
        flat = np.asarray(values, dtype=float).reshape(-1)
        numbers.set_cells(
            [fmt.format(v) for v in flat],
            ["white" if abs(v) > dark_above else "black" for v in flat],
        )


@course_font
def embedding_figure(
    ids, W_e, W_p, vocab: Sequence, *, figsize: tuple[float, float] = (11.0, 3.6), **draw_options
) -> Figure:
    """A new Figure of U · W_e + W_p = h_0 for the tokens `ids`; `draw_options`
    (position_labels, positions, title, fmt) go to EmbeddingCanvas.draw."""
    return EmbeddingCanvas(figsize=figsize).draw(ids, W_e, W_p, vocab, **draw_options)
