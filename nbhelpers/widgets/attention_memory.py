"""Notebook 10's explorer: how much memory one attention call needs, for sizes too big to run.

The figures are estimates from tensor sizes (what each implementation must hold at once),
which notebook 10 compares with measured peaks at sizes the machine can run.
"""

from __future__ import annotations

import ipywidgets as widgets

from ..figures.memory import MemoryBarsCanvas
from ..memory import DTYPES, LENGTHS, attention_memory, implementation_label
from ..support.benchmarking import format_bytes
from ..support.language import ntr, tr
from ..support.validation import check_positive_int
from .base import FigureExplorer
from .readout import markup


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
            raise ValueError(tr("n must be a power of two from 128 to 131072, got {n!r}", n=n))
        if dtype not in DTYPES:
            raise ValueError(
                tr(
                    "dtype must be one of {dtypes}, got {dtype!r}",
                    dtypes=", ".join(DTYPES),
                    dtype=dtype,
                )
            )
        check_positive_int("heads", heads)
        check_positive_int("d_k", d_k)
        if device_memory is not None:
            check_positive_int("device_memory", device_memory)
        self.d_k, self.device_memory = d_k, device_memory
        self.n = widgets.SelectionSlider(
            options=LENGTHS, value=n, description="n", continuous_update=True
        )
        self.heads = widgets.IntSlider(
            value=heads, min=1, max=max(32, heads), description=tr("heads"), continuous_update=True
        )
        self.dtype = widgets.ToggleButtons(options=list(DTYPES), value=dtype, description="dtype")
        self.canvas = MemoryBarsCanvas([implementation_label(k) for k in attention_memory(128)])
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
            title=ntr(
                "one attention call: n = {length}, {n} head, d_k = {d_k}, {dtype}",
                "one attention call: n = {length}, {n} heads, d_k = {d_k}, {dtype}",
                self.heads.value,
                length=self.n.value,
                d_k=self.d_k,
                dtype=self.dtype.value,
            ),
            budget=self.device_memory,
        )
        self.image.value = self.canvas.png()
        scratch, flash = sizes["(a) from scratch"], sizes["(b)/(c) flash"]
        budget = ""
        if self.device_memory is not None:
            memory = format_bytes(self.device_memory)
            budget = (
                markup(" The from-scratch call fits in {memory} (red line).", memory=memory)
                if scratch <= self.device_memory
                else markup(
                    " The from-scratch call does <b>not</b> fit in {memory} (red line).",
                    memory=memory,
                )
            )
        self.show(
            markup(
                "from scratch {scratch}, flash {flash}: {ratio:,.0f}× more.",
                scratch=format_bytes(scratch),
                flash=format_bytes(flash),
                ratio=scratch / flash,
            ),
            budget,
        )

    def __repr__(self) -> str:
        return "AttentionMemoryExplorer()"
