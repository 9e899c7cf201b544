"""The tour's explorer: softmax(S / T) over a fixed score matrix, with a causal toggle."""

from __future__ import annotations

from collections.abc import Sequence

import ipywidgets as widgets
import torch

from ..attention import softmax
from ..figures.heatmap import HeatmapCanvas
from ..masks import causal_mask
from ..support.language import tr
from .base import FigureExplorer, temperature_slider, token_scores
from .readout import markup


class AttentionMatrixExplorer(FigureExplorer):
    """A fixed score matrix over a sentence; a temperature slider and a causal toggle.

    The weights are softmax(scores / temperature), with future keys masked out when causal
    is on. Low temperatures sharpen every row towards its largest score; high ones flatten it.
    """

    def __init__(self, tokens: Sequence[str], scores, *, temperature: float = 1.0):
        self.tokens, self.scores = token_scores(tokens, scores)
        self.temperature = temperature_slider(temperature, low=0.1)
        self.causal = widgets.Checkbox(value=False, description=tr("causal mask"))
        self.query = widgets.Dropdown(
            options=[(t, i) for i, t in enumerate(self.tokens)], value=0, description=tr("query")
        )
        self.canvas = HeatmapCanvas()
        super().__init__([self.temperature, self.causal, self.query])
        self.redraw()

    def weights(self) -> torch.Tensor:
        scores = self.scores / self.temperature.value
        if self.causal.value:
            scores = scores + causal_mask(len(self.tokens))
        return softmax(scores)

    def redraw(self) -> None:
        weights = self.weights()
        i = self.query.value
        masked = torch.isneginf(causal_mask(len(self.tokens))) if self.causal.value else None
        self.canvas.draw(
            weights,
            self.tokens,
            self.tokens,
            masked=masked,
            highlight_row=i,
            title=tr(
                "softmax(S / {temperature:.1f}) with causal mask",
                temperature=self.temperature.value,
            )
            if self.causal.value
            else f"softmax(S / {self.temperature.value:.1f})",
        )
        self.image.value = self.canvas.png()
        row = weights[i]
        top = int(row.argmax())
        self.show(
            markup(
                "query <b>{query}</b> puts {weight:.2f} of its attention on <b>{top}</b>; row "
                "sum = {total:.3f}",
                query=self.tokens[i],
                weight=row[top],
                top=self.tokens[top],
                total=row.sum(),
            )
        )

    def __repr__(self) -> str:
        return f"AttentionMatrixExplorer({len(self.tokens)} tokens)"
