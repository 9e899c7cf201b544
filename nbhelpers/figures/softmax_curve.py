"""Notebook 02's picture of softmax: the scores marked on the curve e^s, each weight the
height of its point over the sum of the heights; and two keys, where softmax is a sigmoid."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from matplotlib.figure import Figure

from ..support.language import tr
from .bars import SERIES_COLOURS
from .canvas import Canvas, check_labels, keep_labels_apart, to_numpy
from .style import MID_GREY, PALE_GREY, course_font

# a leader line ties each label to its point, wherever crowding moves the label
LEADER = {
    "arrowstyle": "-",
    "color": SERIES_COLOURS[0],
    "linewidth": 0.6,
    "shrinkA": 1,
    "shrinkB": 4,
}


@course_font
def softmax_curve_figure(
    scores, labels: Sequence[str] | None = None, *, title: str | None = None
) -> Figure:
    """Left: e^s with each score of the row marked and labelled with its weight
    e^{s_j} / Σ e^{s_j'}. Right: with two keys, a_0 = 1 / (1 + e^{-(s_0 - s_1)}), the
    logistic sigmoid of the score difference."""
    s = to_numpy(scores).reshape(-1)
    if s.size < 1 or not np.all(np.isfinite(s)):
        raise ValueError(tr("scores must be a non-empty row of finite numbers, got {s}", s=s))
    labels = check_labels("labels", labels, s.size, unit=tr("scores"))
    weights = np.exp(s - s.max()) / np.exp(s - s.max()).sum()
    figure = Canvas(figsize=(10.4, 3.9)).figure
    left, right = figure.subplots(1, 2, gridspec_kw={"width_ratios": [1.35, 1.0]})
    figure.subplots_adjust(left=0.07, right=0.98, bottom=0.16, top=0.84, wspace=0.3)
    low, high = min(s.min(), 0.0) - 0.6, s.max() + 0.6
    x = np.linspace(low, high, 200)
    left.plot(x, np.exp(x), color=MID_GREY, linewidth=1.2, label="$e^{s}$")
    placed = []
    for j in np.argsort(-s):
        left.vlines(s[j], 0, np.exp(s[j]), color=SERIES_COLOURS[0], linewidth=1.0, alpha=0.6)
        left.plot([s[j]], [np.exp(s[j])], "o", color=SERIES_COLOURS[0], markersize=6)
        label = left.annotate(labels[j] + tr(": ") + f"{weights[j]:.2f}", (s[j], np.exp(s[j])),
                              textcoords="offset points", xytext=(-8, 6), fontsize=9,
                              arrowprops=LEADER)  # fmt: skip
        placed.append(label)
    left.set_xlabel(tr("score $s_j$"))
    left.set_ylabel("$e^{s_j}$")
    left.set_ylim(0, np.exp(high) * 1.15)
    left.set_title(tr("weight = height / sum of the heights"), fontsize=10)
    d = np.linspace(-6, 6, 200)
    right.plot(d, 1 / (1 + np.exp(-d)), color=SERIES_COLOURS[1], linewidth=2)
    right.axhline(0.5, color=PALE_GREY, linewidth=0.8)
    right.axvline(0.0, color=PALE_GREY, linewidth=0.8)
    right.set_xlabel("$s_0 - s_1$")
    right.set_ylabel("$a_0$")
    right.set_title(tr("two keys: $a_0 = 1 / (1 + e^{-(s_0 - s_1)})$"), fontsize=10)
    figure.suptitle(title or tr("Softmax: exponentiate, then share out"), fontsize=12)
    # left of each point first (the curve climbs to the right), stacked up where points crowd
    offsets = [(dx, dy, align) for dx, align in ((-8, "right"), (8, "left"))
               for dy in (6, 20, 34, 48, -16)]  # fmt: skip
    keep_labels_apart(figure, placed, offsets=offsets)
    return figure
