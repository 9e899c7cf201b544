"""Notebook 05's picture of multi-head attention's reshapes: one projection cut into n_h
heads, each head attending on its own slice, and the heads concatenated back before W_O,
every block labelled with its shape."""

from __future__ import annotations

from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

from ..multihead import check_divisible
from ..support.language import tr
from ..support.validation import check_positive_int
from .bars import SERIES_COLOURS
from .canvas import Canvas
from .style import GREY, course_font, vertical_text

HEAD_COLOURS = (*SERIES_COLOURS, "#7a4fa3", "#8c6d31", "#4a8a8c", "#a35f7a")


def _matrix(ax, x, y, columns, n_heads, width, height, *, split=False, gap=0.0):
    """A (rows x columns) block drawn as n_heads coloured column groups."""
    part = width / n_heads
    for r in range(n_heads):
        left = x + r * (part + (gap if split else 0.0))
        colour = HEAD_COLOURS[r % len(HEAD_COLOURS)]
        ax.add_patch(Rectangle((left, y), part, height, facecolor=colour, alpha=0.35,
                               edgecolor=colour, linewidth=1.2))  # fmt: skip
    return x + width + (gap * (n_heads - 1) if split else 0.0)


@course_font
def head_split_figure(n: int, d_model: int, n_heads: int, *, title: str | None = None) -> Figure:
    """Q = X W_Q (n, d_model) -> view and transpose to (n_h, n, d_head) -> one attention per
    head -> transpose back and merge to (n, d_model) -> W_O. Head r owns the feature columns
    r·d_head ... (r + 1)·d_head − 1, counted from 0."""
    for name, value in (("n", n), ("d_model", d_model), ("n_heads", n_heads)):
        check_positive_int(name, value)
    check_divisible(d_model, n_heads)
    if n_heads > 8:
        raise ValueError(
            tr("n_heads must be at most 8 to be drawn, got {n_heads}", n_heads=n_heads)
        )
    d_head = d_model // n_heads
    figure = Canvas(figsize=(11.0, 3.4)).figure
    ax = figure.add_axes((0, 0, 1, 1))
    ax.set_xlim(0, 11.0)
    ax.set_ylim(0, 3.4)
    ax.axis("off")
    height, y = 1.3, 1.1
    steps = [
        (0.3, 1.6, False, "$Q = XW_Q$", f"({n}, {d_model})"),
        (2.7, 2.2, True, "view() + transpose()", f"({n_heads}, {n}, {d_head})"),
        (5.7, 2.2, True, tr("attention, head by head"), f"({n_heads}, {n}, {d_head})"),
        (8.5, 1.6, False, tr("merge: Concat"), f"({n}, {d_model})"),
    ]
    ends = []
    for x, width, split, name, shape in steps:
        end = _matrix(ax, x, y, d_model, n_heads, width, height, split=split, gap=0.12)
        ends.append((x, end))
        ax.text((x + end) / 2, y + height + 0.45, name, ha="center", va="bottom", fontsize=10)
        ax.text((x + end) / 2, y + height + 0.12, shape, ha="center", va="bottom", fontsize=9,
                color=GREY)  # fmt: skip
        if split:
            part = width / n_heads
            for r in range(n_heads):
                left = x + r * (part + 0.12)
                label = tr("head {k}", k=r)
                label, rotation = vertical_text(label) if n_heads > 4 else (label, 0)
                ax.text(left + part / 2, y - 0.12, label, ha="center", va="top", fontsize=9,
                        rotation=rotation, linespacing=1.0)  # fmt: skip
    for (_, end), (start, _) in zip(ends, ends[1:], strict=False):
        ax.annotate("", (start - 0.08, y + height / 2), (end + 0.08, y + height / 2),
                    arrowprops={"arrowstyle": "->", "color": GREY})  # fmt: skip
    last = ends[-1][1]
    ax.annotate("", (last + 0.55, y + height / 2), (last + 0.08, y + height / 2),
                arrowprops={"arrowstyle": "->", "color": GREY})  # fmt: skip
    ax.text(last + 0.6, y + height / 2, "$W_O$", ha="left", va="center", fontsize=11)
    ax.text(5.5, 0.15,
            tr("head r owns features r·d_head … (r + 1)·d_head − 1 (d_head = {d_head})",
               d_head=d_head),
            ha="center", fontsize=9, color=GREY)  # fmt: skip
    figure.suptitle(title or "", fontsize=12)
    return figure
