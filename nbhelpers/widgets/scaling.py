"""Notebook 09's explorer: how much memory one attention call needs, for sizes too big to run.

The figures are estimates from tensor sizes (what each implementation must hold at once),
which notebook 09 compares with measured peaks at sizes the machine can run.
"""

from __future__ import annotations

import ipywidgets as widgets
import numpy as np
import torch
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from ..benchmarking import format_bytes
from ..charts import SERIES_COLOURS
from ..plotting import figure_to_png
from ..validation import check_positive_int
from .base import FigureExplorer

DTYPES = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16}
LENGTHS = [2**k for k in range(7, 18)]  # 128 .. 131072


def attention_memory(
    n: int, *, heads: int = 1, d_k: int = 64, batch: int = 1, dtype: torch.dtype = torch.float32
) -> dict[str, int]:
    """Bytes one self-attention call over n tokens holds at its peak, per implementation.

    * from scratch: the scores, their exponentials and the weights, three (n, n) matrices
      per head, plus the output (n, d_k);
    * math kernel: about two (n, n) matrices per head, plus the output;
    * flash: the output and one float32 number per row (its log-sum-exp), no (n, n) matrix.
    """
    for name, value in (("n", n), ("heads", heads), ("d_k", d_k), ("batch", batch)):
        check_positive_int(name, value)
    if not isinstance(dtype, torch.dtype) or not dtype.is_floating_point:
        raise ValueError(f"dtype must be a floating-point torch.dtype, got {dtype!r}")
    size = torch.finfo(dtype).bits // 8
    matrix = batch * heads * n * n * size
    output = batch * heads * n * d_k * size
    return {
        "(a) from scratch": 3 * matrix + output,
        "(c) sdpa[math]": 2 * matrix + output,
        "(b)/(c) flash": output + batch * heads * n * 4,
    }


class MemoryBarsCanvas:
    """Horizontal bars on a logarithmic byte axis; artists are reused between draws."""

    def __init__(self, labels: list[str], *, figsize: tuple[float, float] = (6.0, 2.6)):
        self.figure = Figure(figsize=figsize, dpi=90)
        FigureCanvasAgg(self.figure)
        self.figure.subplots_adjust(left=0.25, right=0.97, bottom=0.22, top=0.86)
        self.ax = self.figure.add_subplot()
        y = np.arange(len(labels))
        colours = [SERIES_COLOURS[k % len(SERIES_COLOURS)] for k in range(len(labels))]
        self._bars = self.ax.barh(y, np.ones(len(labels)), color=colours, left=1.0)
        self._texts = [self.ax.text(1, i, "", va="center", fontsize=8) for i in y]
        self.ax.set_yticks(y, labels)
        self.ax.invert_yaxis()
        self.ax.set_xscale("log")
        self.ax.set_xlabel("bytes (log scale)")
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

    def png(self) -> bytes:
        return figure_to_png(self.figure)


class AttentionMemoryExplorer(FigureExplorer):
    """Sliders for n, the number of heads and the dtype; bars of the memory each attention
    implementation needs (estimated from tensor sizes), against a device's memory."""

    def __init__(
        self,
        *,
        n: int = 4096,
        heads: int = 12,
        d_k: int = 64,
        dtype: str = "float32",
        device_memory: int | None = 80 * 2**30,
    ):
        if n not in LENGTHS:
            raise ValueError(f"n must be a power of two from 128 to 131072, got {n!r}")
        if dtype not in DTYPES:
            raise ValueError(f"dtype must be one of {', '.join(DTYPES)}, got {dtype!r}")
        check_positive_int("heads", heads)
        check_positive_int("d_k", d_k)
        if device_memory is not None:
            check_positive_int("device_memory", device_memory)
        self.d_k, self.device_memory = d_k, device_memory
        self.n = widgets.SelectionSlider(
            options=LENGTHS, value=n, description="n", continuous_update=True
        )
        self.heads = widgets.IntSlider(
            value=heads, min=1, max=max(32, heads), description="heads", continuous_update=True
        )
        self.dtype = widgets.ToggleButtons(options=list(DTYPES), value=dtype, description="dtype")
        self.canvas = MemoryBarsCanvas(list(attention_memory(128)))
        super().__init__([self.n, self.heads, self.dtype])
        self.redraw()

    def sizes(self) -> dict[str, int]:
        return attention_memory(
            self.n.value, heads=self.heads.value, d_k=self.d_k, dtype=DTYPES[self.dtype.value]
        )

    def redraw(self) -> None:
        sizes = self.sizes()
        self.canvas.draw(
            list(sizes.values()),
            title=f"one attention call: n = {self.n.value}, {self.heads.value} heads, "
            f"d_k = {self.d_k}, {self.dtype.value}",
            budget=self.device_memory,
        )
        self.image.value = self.canvas.png()
        scratch, flash = sizes["(a) from scratch"], sizes["(b)/(c) flash"]
        budget = ""
        if self.device_memory is not None:
            fits = "fits" if scratch <= self.device_memory else "does <b>not</b> fit"
            budget = (
                f" The from-scratch call {fits} in {format_bytes(self.device_memory)} (red line)."
            )
        self.readout.value = (
            f"from scratch {format_bytes(scratch)}, flash {format_bytes(flash)}: "
            f"{scratch / flash:,.0f}× more.{budget}"
        )

    def __repr__(self) -> str:
        return "AttentionMemoryExplorer()"
