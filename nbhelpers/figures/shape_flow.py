"""Notebook 03's shape-flow diagram: X -> Q, K, V -> S -> A -> O, every matrix with its shape."""

from __future__ import annotations

from matplotlib.figure import Figure
from matplotlib.patches import FancyBboxPatch

from ..support.language import tr
from ..support.validation import check_positive_int
from .bars import SERIES_COLOURS
from .canvas import Canvas
from .style import GREY, INK, course_font


@course_font
def shape_flow_figure(n: int, d_model: int, d_k: int, d_v: int) -> Figure:
    """Boxes for X, Q, K, V, S, A and O labelled with their shapes for a sentence of n
    tokens, joined by arrows labelled with the operation that makes each one."""
    for name, value in (("n", n), ("d_model", d_model), ("d_k", d_k), ("d_v", d_v)):
        check_positive_int(name, value)
    figure = Canvas(figsize=(10.8, 3.85), dpi=100).figure
    ax = figure.add_axes((0, 0, 1, 1))
    ax.set_xlim(0, 10.8)  # one unit is 100 px, with room for O's box at the right
    ax.set_ylim(-0.25, 3.6)  # and for the caption under V's
    ax.axis("off")
    boxes = {
        "X": (0.95, 1.8, f"$X$\n{n} × {d_model}", SERIES_COLOURS[0]),
        "Q": (3.1, 2.95, f"$Q = XW_Q$: {n} × {d_k}\n($W_Q$: {d_model} × {d_k})", SERIES_COLOURS[1]),
        "K": (3.1, 1.8, f"$K = XW_K$: {n} × {d_k}\n($W_K$: {d_model} × {d_k})", SERIES_COLOURS[1]),
        "V": (3.1, 0.65, f"$V = XW_V$: {n} × {d_v}\n($W_V$: {d_model} × {d_v})", SERIES_COLOURS[2]),
        "S": (5.35, 2.4, f"$S = QK^T/\\sqrt{{d_k}}$\n{n} × {n}", SERIES_COLOURS[3]),
        "A": (7.65, 2.4, f"$A = $softmax$(S)$\n{n} × {n}", SERIES_COLOURS[3]),
        "O": (9.65, 1.5, f"$O = AV$\n{n} × {d_v}", SERIES_COLOURS[2]),
    }
    width, height = 1.75, 0.8
    for x, y, text, colour in boxes.values():
        ax.add_patch(
            FancyBboxPatch((x - width / 2, y - height / 2), width, height,
                           boxstyle="round,pad=0.04", facecolor=colour, alpha=0.18,
                           edgecolor=colour, linewidth=1.5)
        )  # fmt: skip
        ax.text(x, y, text, ha="center", va="center", fontsize=10)
    arrows = [
        ("X", "Q", ""),
        ("X", "K", ""),
        ("X", "V", ""),
        ("Q", "S", ""),
        ("K", "S", ""),
        ("S", "A", tr("row-wise")),
        ("A", "O", ""),
        ("V", "O", ""),
    ]
    for start, end, label in arrows:
        (x0, y0, *_), (x1, y1, *_) = boxes[start], boxes[end]
        begin = (x0 + width / 2 + 0.05, y0)
        finish = (x1 - width / 2 - 0.05, y1)
        ax.annotate("", finish, begin, arrowprops={"arrowstyle": "->", "color": GREY})
        if label:
            ax.text((begin[0] + finish[0]) / 2, (begin[1] + finish[1]) / 2 + 0.12, label,
                    ha="center", va="bottom", fontsize=9, color=INK)  # fmt: skip
    ax.text(5.4, -0.12, tr("n tokens; d_k: query and key width; d_v: value width"), ha="center",
            va="center", fontsize=9, color=GREY)  # fmt: skip
    return figure
