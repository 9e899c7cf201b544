"""Notebook 10's pictures of its two memory savers: the KV cache, which keeps the keys and
values of earlier tokens so that a step computes only the new token's row, and the online
softmax of the flash kernel, which visits the keys one block at a time."""

from __future__ import annotations

import numpy as np
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

from ..support.language import tr
from ..support.validation import check_positive_int
from .bars import SERIES_COLOURS
from .canvas import Canvas, to_numpy
from .style import GREY, INK, LIGHT_GREY, MID_GREY, course_font


@course_font
def kv_cache_diagram(steps: int = 4, *, title: str | None = None) -> Figure:
    """One column per generation step t: the cached keys and values of tokens 0 .. t − 1
    (grey, computed at earlier steps), the new token's k_t and v_t (coloured, computed
    now) appended, and its query q_t at position t, the only query of the step, attending to
    all t + 1 keys (one arrow each)."""
    check_positive_int("steps", steps)
    if steps > 8:
        raise ValueError(tr("steps must be at most 8 to be drawn, got {steps}", steps=steps))
    figure = Canvas(figsize=(2.2 * steps + 1.2, 3.9)).figure
    ax = figure.add_axes((0, 0, 1, 0.88))
    ax.set_xlim(-0.9, 2.2 * steps)
    ax.set_ylim(-0.9, steps + 1.6)
    ax.axis("off")
    for t in range(steps):
        x = 2.2 * t
        ax.text(x + 0.75, steps + 1.25, tr("step t = {t}", t=t), ha="center", fontsize=10)
        for j in range(t + 1):
            new = j == t
            for column, label in ((0, "k"), (0.8, "v")):
                ax.add_patch(Rectangle((x + column, j), 0.7, 0.85,
                                       facecolor=SERIES_COLOURS[0] if new else "#cfcfcf",
                                       alpha=0.45 if new else 1.0, edgecolor="white"))  # fmt: skip
                ax.text(x + column + 0.35, j + 0.42, f"${label}_{{{j}}}$", ha="center",
                        va="center", fontsize=10)  # fmt: skip
        ax.add_patch(Rectangle((x + 0.4, -0.85), 0.7, 0.7, facecolor=SERIES_COLOURS[1],
                               alpha=0.45, edgecolor="white"))  # fmt: skip
        ax.text(x + 0.75, -0.5, f"$q_{{{t}}}$", ha="center", va="center", fontsize=10)
        for j in range(t + 1):  # q_t reads every key so far, its own included
            ax.annotate("", (x - 0.02, j + 0.42), (x + 0.4, -0.5),
                        arrowprops={"arrowstyle": "->", "color": MID_GREY, "lw": 0.8,
                                    "connectionstyle": "arc3,rad=-0.25"})  # fmt: skip
        ax.text(x + 1.15, -0.5, tr("position {t}", t=t), ha="left", va="center", fontsize=9,
                color=GREY)  # fmt: skip
    ax.text(-0.85, steps + 0.55,
            tr("grey: cached; coloured: computed at this step; every block keeps its own stack"),
            ha="left", fontsize=9, color=GREY)  # fmt: skip
    default = tr("The KV cache: each step adds one row of keys and values")
    figure.suptitle(title or default, fontsize=11)
    return figure


@course_font
def online_softmax_figure(scores, block: int, *, title: str | None = None) -> Figure:
    """One query's scores, visited `block` keys at a time as the flash kernel does: bars of
    the scores, one shade per block, and after each block the running maximum m and the
    running denominator Σ e^{s_j − m} over the keys seen so far (rescaled by e^{m_old − m}
    whenever the maximum grows). The last denominator is the softmax's."""
    s = to_numpy(scores).reshape(-1)
    check_positive_int("block", block)
    if s.size < 1 or not np.all(np.isfinite(s)):
        raise ValueError(tr("scores must be a non-empty row of finite numbers, got {s}", s=s))
    figure = Canvas(figsize=(10.4, 3.9)).figure
    ax = figure.add_axes((0.07, 0.34, 0.9, 0.52))
    colours = (SERIES_COLOURS[0], SERIES_COLOURS[2])
    running_max, denominator = -np.inf, 0.0
    for b, start in enumerate(range(0, s.size, block)):
        part = s[start : start + block]
        xs = np.arange(start, start + part.size)
        ax.bar(xs, part, color=colours[b % 2], alpha=0.7, width=0.8)
        new_max = max(running_max, float(part.max()))
        rescale, added = np.exp(running_max - new_max), float(np.exp(part - new_max).sum())
        readout = f"μ = {new_max:.2f}\nD = {added:.2f}"
        if b:  # the old sum, rescaled to the new maximum, plus this block's
            readout = (f"μ = {new_max:.2f}\nD = {denominator:.2f} × {rescale:.2f}\n"
                       f"    + {added:.2f} = {denominator * rescale + added:.2f}")  # fmt: skip
        denominator, running_max = denominator * rescale + added, new_max
        ax.hlines(running_max, start - 0.45, start + part.size - 0.55, color=INK, lw=1.2,
                  ls=":", label=tr("running maximum μ") if b == 0 else None)  # fmt: skip
        ax.text(start + (part.size - 1) / 2, -0.2, readout, transform=ax.get_xaxis_transform(),
                ha="center", va="top", fontsize=9)  # fmt: skip
        if start:
            ax.axvline(start - 0.5, color=LIGHT_GREY, linewidth=0.8, linestyle="--")
    ax.set_xticks(range(s.size))
    ax.tick_params(labelsize=9)
    ax.set_xlabel(tr("key j"), fontsize=10, labelpad=2)
    ax.set_ylabel(tr("score $s_j$"), fontsize=10)
    ax.legend(fontsize=9, loc="upper left", frameon=False)
    figure.suptitle(
        title or tr("Online softmax: the keys block by block, {block} at a time",
                               block=block), fontsize=11)  # fmt: skip
    return figure
