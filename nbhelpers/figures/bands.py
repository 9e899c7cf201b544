"""A mean over seeds drawn as a line, with the lowest to the highest seed as a band around
it, and the legend entry that says so."""

from __future__ import annotations

import numpy as np
from matplotlib.patches import Patch

from ..support.language import tr
from .style import MID_GREY


def band(ax, xs, groups, colour, style, marker, label) -> list:
    """The mean of each group as a line, the lowest to highest as a band; returns both."""
    area = ax.fill_between(xs, [min(g) for g in groups], [max(g) for g in groups], color=colour,
                           alpha=0.15, lw=0)  # fmt: skip
    return [area, *ax.plot(xs, [np.mean(g) for g in groups], style, color=colour, marker=marker,
                           ms=3.5, label=label)]  # fmt: skip


def seeds_entry(seeds: int) -> Patch:
    """A legend entry that says what a line and its band are."""
    return Patch(facecolor=MID_GREY, alpha=0.15,
                 label=tr("line: mean of {n} seeds\nband: lowest to highest", n=seeds))  # fmt: skip
