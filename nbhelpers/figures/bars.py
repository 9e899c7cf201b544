"""Bar charts that redraw quickly: probabilities over tokens, vector components, etc.

Like HeatmapCanvas, a BarCanvas keeps its Figure and artists between draws and only
changes bar heights and labels, rebuilding only when the number of bars or series changes.
With `blit=True` (for explorers) `png()` renders the frame, the y axis and the legend once
per y range and paints the bars, their numbers, the title and (once they change) the bars'
labels over them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
from matplotlib.figure import Figure

from ..support.language import tr
from .canvas import DPI, MIN_FONT_PT, BlitCanvas, to_numpy
from .style import SERIES, course_font

SERIES_COLOURS = SERIES
BAR_COLOURS = (*SERIES, "#7a5aa6")  # a fifth series of bars in purple, not blue again
ANNOTATE_MAX_BARS = 24
LABEL_GAP_PX = 4  # the least room between two bars' value labels side by side


class BarCanvas(BlitCanvas):
    """Grouped bars: one group per label, one bar per series (e.g. "model" and "true")."""

    def __init__(
        self, *, figsize: tuple[float, float] = (5.6, 3.2), dpi: int = DPI, blit: bool = False
    ):
        super().__init__(figsize=figsize, dpi=dpi, blit=blit)
        self.figure.subplots_adjust(left=0.12, right=0.97, bottom=0.2, top=0.86)
        self.ax = self.figure.add_subplot()
        self._bars: list = []
        self._texts: list = []
        self._layout: tuple | None = None
        self._bar_width = 0.8

    def _build(self, names: tuple[str, ...], count: int) -> None:
        self.ax.clear()
        width = self._bar_width = 0.8 / len(names)
        x = np.arange(count)
        self._bars, self._texts = [], []
        for k, name in enumerate(names):
            offset = (k - (len(names) - 1) / 2) * width
            bars = self.ax.bar(
                x + offset,
                np.zeros(count),
                width,
                label=name,  # a caller's series name, as its legend shows it
                color=BAR_COLOURS[k % len(BAR_COLOURS)],
            )
            self._bars.append(bars)
            if count * len(names) <= ANNOTATE_MAX_BARS:
                self._texts.append(
                    [
                        self.ax.text(
                            x[i] + offset, 0, "", ha="center", va="bottom", fontsize=MIN_FONT_PT
                        )
                        for i in range(count)
                    ]
                )
        self.ax.set_xticks(x)
        self.ax.axhline(0, color="black", linewidth=0.6)
        if len(names) > 1:
            self.ax.legend(loc="upper right", fontsize=MIN_FONT_PT)
        self._layout = (names, count)
        changing = [bar for bars in self._bars for bar in bars]
        changing += [text for texts in self._texts for text in texts] + [self.ax.title]
        # the legend too: a full render draws it over a bar that reaches it
        changing += [self.ax.get_legend()] if self.ax.get_legend() is not None else []
        self.changing(*changing, replace=True)

    def draw(
        self,
        series: Mapping[str, Sequence[float]] | Sequence[float],
        labels: Sequence[str],
        *,
        title: str | None = None,
        ylabel: str = "",
        ylim: tuple[float, float] | None = None,
        highlight: int | None = None,
        fmt: str = "{:.2f}",
    ) -> Figure:
        """Draw the bars; `series` is one sequence or a mapping name -> sequence."""
        if not isinstance(series, Mapping):
            series = {"": series}
        values = {name: to_numpy(v).reshape(-1) for name, v in series.items()}
        labels = [str(label) for label in labels]
        # Checked here, or an empty chart fails deep inside numpy with a zero-size reduction.
        if not values:
            raise ValueError(tr("series must hold at least one sequence of values, got none"))
        if not labels:
            raise ValueError(tr("labels must name at least one bar, got none"))
        for name, v in values.items():
            if v.shape != (len(labels),):
                raise ValueError(
                    tr(
                        "series {name!r} has {v_size} values but there are {len_labels} labels",
                        name=name,
                        v_size=v.size,
                        len_labels=len(labels),
                    )
                )
        names = tuple(values)
        if self._layout != (names, len(labels)):
            self._build(names, len(labels))
        top = max(float(np.nanmax(np.abs(v))) if v.size else 0.0 for v in values.values())
        for k, name in enumerate(names):
            for i, bar in enumerate(self._bars[k]):
                bar.set_height(values[name][i])
                bar.set_edgecolor("red" if i == highlight else "none")
                bar.set_linewidth(2 if i == highlight else 0)
            if self._texts:
                for i, text in enumerate(self._texts[k]):
                    value = values[name][i]
                    text.set_text(fmt.format(value))
                    text.set_y(value if value >= 0 else 0)
        self.ax.set_xticklabels(labels)
        self.ax.set_ylim(
            *(ylim or (min(0.0, *(v.min() for v in values.values())) * 1.15, max(top * 1.15, 1e-9)))
        )
        self._fit_labels(grow=ylim is None)
        self.ax.set_ylabel(ylabel)
        self.ax.set_title(title or "")
        self.follow(self.ax.xaxis, labels)
        return self.figure

    def _fit_labels(self, *, grow: bool) -> None:
        """Value labels stand upright where each fits over its bar with room to spare, and
        turn on their side where it does not (neighbours would read as one number,
        "1.001.00"); on their side they need headroom, which `grow` adds above the bars."""
        texts = [text for texts in self._texts for text in texts]
        if not texts:
            return
        renderer = self.figure.canvas.get_renderer()
        widest = max(
            renderer.get_text_width_height_descent(
                text.get_text(), text.get_fontproperties(), ismath=False
            )[0]
            for text in texts
        )
        x0 = self.ax.transData.transform((0.0, 0.0))[0]
        bar = self.ax.transData.transform((self._bar_width, 0.0))[0] - x0  # pixels
        upright = widest + LABEL_GAP_PX <= bar
        for text in texts:
            text.set_rotation(0 if upright else 90)
        if upright or not grow:
            return
        # room for a label `widest` pixels tall above the highest bar: the top t solves
        # highest + w (t - bottom) / H = t, with w the label's height and H the axes'
        bottom, top = self.ax.get_ylim()
        highest = max(text.get_position()[1] for text in texts)
        share = (widest + LABEL_GAP_PX) / self.ax.bbox.height
        self.ax.set_ylim(bottom, max(top, (highest - bottom * share) / (1 - share)))

    def shows(self):
        return (self.ax.get_ylim(), self.ax.get_ylabel())


@course_font
def bar_chart(series, labels, **kwargs) -> Figure:
    """A new Figure of (grouped) bars; see BarCanvas.draw for the arguments."""
    return BarCanvas().draw(series, labels, **kwargs)
