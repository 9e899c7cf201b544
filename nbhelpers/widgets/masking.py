"""Notebook 04's explorer: which keys each query may see under causal and padding masks."""

from __future__ import annotations

from collections.abc import Sequence

import ipywidgets as widgets
import torch

from ..attention import softmax
from ..figures.heatmap import HeatmapCanvas
from ..masks import causal_mask, padding_mask
from ..support.language import listing, tr
from ..support.validation import is_int
from .base import FigureExplorer, token_scores
from .readout import markup, markup_n

PAD = "[PAD]"


class MaskExplorer(FigureExplorer):
    """softmax(S + M) over a fixed score matrix S, with M built from the controls.

    `causal` adds the causal mask (no key after the query); `padding` turns the last p tokens
    into padding, which no query may attend to. Masked cells are drawn grey with a ×. With
    every key of a row masked, the row's weights are all 0 (nbhelpers' softmax), never NaN.
    """

    def __init__(self, tokens: Sequence[str], scores, *, causal: bool = True, padding: int = 0):
        self.tokens, self.scores = token_scores(tokens, scores)
        n = len(self.tokens)
        if not is_int(padding) or not 0 <= padding <= n:
            raise ValueError(
                tr(
                    "padding must be an int in [0, {n}] (the number of tokens), got {padding!r}",
                    n=n,
                    padding=padding,
                )
            )
        self.causal = widgets.Checkbox(value=causal, description=tr("causal mask"))
        self.padding = widgets.IntSlider(
            value=padding, min=0, max=n, step=1, description=tr("padding"), continuous_update=True
        )
        self.query = widgets.Dropdown(
            options=[(tr("{i}: {token}", i=i, token=t), i) for i, t in enumerate(self.tokens)],
            value=n - 1,
            description=tr("query"),
        )
        self.canvas = HeatmapCanvas()
        super().__init__([self.causal, self.padding, self.query])
        self.redraw()

    def labels(self) -> list[str]:
        """The tokens, with the last `padding` of them shown as padding."""
        real = len(self.tokens) - self.padding.value
        return self.tokens[:real] + [PAD] * self.padding.value

    def mask(self) -> torch.Tensor:
        """The additive mask M (n, n): 0 where query i may see key j, -inf where not."""
        n = len(self.tokens)
        mask = torch.zeros(n, n)
        if self.causal.value:
            mask = mask + causal_mask(n)
        if self.padding.value:
            mask = mask + padding_mask([n - self.padding.value], n)[0]
        return mask

    def weights(self) -> torch.Tensor:
        return softmax(self.scores + self.mask())

    def redraw(self) -> None:
        mask, labels, i = self.mask(), self.labels(), self.query.value
        weights = softmax(self.scores + mask)
        blocked = torch.isneginf(mask)
        parts = [tr("causal")] if self.causal.value else []
        if self.padding.value:
            parts.append(tr("{count} padded", count=self.padding.value))
        self.canvas.draw(
            weights,
            labels,
            labels,
            masked=blocked,
            highlight_row=i,
            title=tr("softmax(S + M): {parts}", parts=listing(parts) if parts else tr("no mask")),
        )
        self.image.value = self.canvas.png()
        row, visible = weights[i], int((~blocked[i]).sum())
        if visible == 0:
            self.show(
                markup(
                    "query <b>{query}</b> may see no key: every weight is 0 and so is its "
                    "output (with plain −∞ and softmax it would be NaN)",
                    query=labels[i],
                )
            )
            return
        top = int(row.argmax())
        hidden = len(labels) - visible
        self.show(
            markup(
                "query <b>{query}</b> sees {visible} of {count} keys and puts {weight:.2f} on "
                "<b>{top}</b>; ",
                query=labels[i],
                visible=visible,
                count=len(labels),
                weight=row[top],
                top=labels[top],
            ),
            markup_n(
                "its {n} masked weight is exactly {total:g}; ",
                "its {n} masked weights are exactly {total:g}; ",
                hidden,
                total=float(row[blocked[i]].sum()),
            )
            if hidden
            else "",
            markup("row sum = {total:.3f}", total=float(row.sum())),
        )

    def __repr__(self) -> str:
        return f"MaskExplorer({len(self.tokens)} tokens)"
