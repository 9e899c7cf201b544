"""Notebook 09's picture of generation: the model runs once per new token, on everything so
far, and the token it picks joins the input of the next step."""

from __future__ import annotations

from collections.abc import Sequence

from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

from ..support.language import tr
from .bars import SERIES_COLOURS
from .canvas import Canvas
from .style import GREY, MID_GREY, course_font


@course_font
def generation_loop_figure(tokens: Sequence[str], *, title: str | None = None) -> Figure:
    """Row t: the context tokens 0 .. t fed to the model, an arrow, and the token it picks,
    which row t + 1 feeds back in; `tokens` is a whole generated sentence from <SOS>."""
    tokens = [str(t) for t in tokens]
    if len(tokens) < 2:
        raise ValueError(
            tr(
                "tokens must hold at least <SOS> and one generated token, got {tokens}",
                tokens=tokens,
            )
        )
    steps = len(tokens) - 1
    figure = Canvas(figsize=(1.0 * steps + 4.2, 0.55 * steps + 1.4)).figure
    ax = figure.add_axes((0.02, 0.02, 0.96, 0.84))
    ax.set_xlim(-0.7, steps + 3.0)
    ax.set_ylim(steps - 0.4, -1.1)
    ax.axis("off")
    ax.text(-0.6, -0.8, tr("step"), ha="left", va="center", fontsize=9, color=GREY)
    ax.text(steps / 2, -0.8, tr("input: everything so far"), ha="center", fontsize=9,
            color=GREY)  # fmt: skip
    ax.text(steps + 1.9, -0.8, tr("picked"), ha="center", fontsize=9, color=GREY)
    for t in range(steps):
        for j in range(t + 1):
            new = j == t and t > 0
            ax.add_patch(Rectangle((j + 0.05, t - 0.38), 0.9, 0.76,
                                   facecolor=SERIES_COLOURS[1] if new else SERIES_COLOURS[0],
                                   alpha=0.3 if new else 0.18, edgecolor="white"))  # fmt: skip
            ax.text(j + 0.5, t, tokens[j], ha="center", va="center", fontsize=10)
        ax.annotate("", (steps + 1.35, t), (t + 1.1, t),
                    arrowprops={"arrowstyle": "->", "color": MID_GREY})  # fmt: skip
        ax.text(steps + 1.9, t, tokens[t + 1], ha="center", va="center", fontsize=11,
                color=SERIES_COLOURS[1])  # fmt: skip
        ax.text(-0.45, t, f"{t}", ha="center", va="center", fontsize=9, color=GREY)
    figure.suptitle(title or tr("Generation: one model call per new token"),
                    fontsize=11)  # fmt: skip
    return figure
