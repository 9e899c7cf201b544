"""Notebook 04's picture of training under the mask: every position predicts its next token
at once, each seeing only the tokens up to itself (teacher forcing)."""

from __future__ import annotations

from collections.abc import Sequence

from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

from ..support.language import tr
from .bars import SERIES_COLOURS
from .canvas import MASKED_COLOUR, Canvas
from .style import BLOCKED, GREY, course_font


@course_font
def teacher_forcing_figure(tokens: Sequence[str], *, title: str | None = None) -> Figure:
    """Row i: the tokens position i may attend to (0 .. i, coloured) and those the mask
    hides (greyed, ×), then the token it is trained to predict, token i + 1. Positions are
    counted from 0, as in the code. All rows are
    one forward pass: the true sentence is the input, shifted by one it is the target."""
    tokens = [str(t) for t in tokens]
    if len(tokens) < 2:
        raise ValueError(
            tr(
                "tokens must hold at least 2 tokens (an input and a target), got {tokens}",
                tokens=tokens,
            )
        )
    inputs, targets = tokens[:-1], tokens[1:]
    n = len(inputs)
    # At least as wide as for two inputs, so that the title fits above a single row.
    figure = Canvas(figsize=(max(1.0 * n + 3.2, 5.2), 0.55 * n + 1.3), dpi=100).figure
    ax = figure.add_axes((0.02, 0.02, 0.96, 0.86))
    ax.set_xlim(-0.6, n + 2.2)
    ax.set_ylim(n - 0.4, -1.2)
    ax.axis("off")
    for j in range(n):
        ax.text(j, -0.85, tr("key {j}", j=j), ha="center", va="center", fontsize=9, color=GREY)
    ax.text(n + 1.1, -0.85, tr("trained to predict"), ha="center", va="center", fontsize=9,
            color=GREY)  # fmt: skip
    for i in range(n):
        for j, token in enumerate(inputs):
            seen = j <= i
            ax.add_patch(Rectangle((j - 0.45, i - 0.4), 0.9, 0.8,
                                   facecolor=SERIES_COLOURS[0] if seen else MASKED_COLOUR,
                                   alpha=0.25 if seen else 0.6, edgecolor="white"))  # fmt: skip
            ax.text(j, i, token if seen else "×", ha="center", va="center",
                    fontsize=11 if seen else 9, color="black" if seen else BLOCKED)  # fmt: skip
        ax.annotate("", (n + 0.55, i), (n - 0.4, i), arrowprops={"arrowstyle": "->"})
        ax.text(n + 1.1, i, targets[i], ha="center", va="center", fontsize=12,
                color=SERIES_COLOURS[3])  # fmt: skip
        ax.text(-0.55, i, f"{i}", ha="right", va="center", fontsize=9, color=GREY)
    default = tr("One forward pass, every position at once, each under the mask")
    figure.suptitle(title or default, fontsize=11)
    return figure
