"""Notebook 10's memory bars: bytes per implementation on a logarithmic axis."""

from __future__ import annotations

import numpy as np
from matplotlib.figure import Figure

from ..support.benchmarking import format_bytes
from ..support.language import tr
from .bars import SERIES_COLOURS
from .canvas import DPI, MIN_FONT_PT, Canvas


class MemoryBarsCanvas(Canvas):
    """Horizontal bars on a logarithmic byte axis; artists are reused between draws."""

    def __init__(self, labels: list[str], *, figsize: tuple[float, float] = (6.0, 2.6)):
        super().__init__(figsize=figsize, dpi=DPI)
        self.figure.subplots_adjust(left=0.25, right=0.97, bottom=0.22, top=0.86)
        self.ax = self.figure.add_subplot()
        y = np.arange(len(labels))
        colours = [SERIES_COLOURS[k % len(SERIES_COLOURS)] for k in range(len(labels))]
        self._bars = self.ax.barh(y, np.ones(len(labels)), color=colours, left=1.0)
        self._texts = [self.ax.text(1, i, "", va="center", fontsize=MIN_FONT_PT) for i in y]
        self.ax.set_yticks(y, labels)
        self.ax.invert_yaxis()
        self.ax.set_xscale("log")
        self.ax.set_xlabel(tr("bytes (log scale)"))
        self.ax.grid(True, axis="x", alpha=0.3)
        self._budget = self.ax.axvline(1, color="red", linestyle="--", linewidth=1)

    def draw(self, sizes: list[int], *, title: str = "", budget: int | None = None) -> Figure:
        for bar, text, size in zip(self._bars, self._texts, sizes, strict=True):
            bar.set_width(size - 1)  # bars start at 1 byte: log axes have no zero
            text.set_x(size * 1.3)
            text.set_text(format_bytes(size))
        high = max(max(sizes), budget or 1)
        self.ax.set_xlim(1e3, high * 200)
        self._budget.set_visible(budget is not None)
        if budget is not None:
            self._budget.set_xdata([budget, budget])
        self.ax.set_title(title, fontsize=10)
        return self.figure
