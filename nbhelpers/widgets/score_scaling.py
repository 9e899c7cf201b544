"""Notebook 01's explorer: how d_k and the 1/sqrt(d_k) scaling shape the attention weights."""

from __future__ import annotations

import math
from collections.abc import Sequence

import ipywidgets as widgets
import torch

from ..attention import similarity_scores, softmax
from ..figures.heatmap import HeatmapCanvas
from ..statistics import row_entropy
from ..support.language import tr
from ..support.validation import check_positive_int
from .base import FigureExplorer
from .readout import markup

DEFAULT_TOKENS = ("犬", "が", "河岸", "を", "歩く")


class ScoreScalingExplorer(FigureExplorer):
    """softmax(Q Kᵀ) or softmax(Q Kᵀ / sqrt(d_k)) for random unit-variance Q, K.

    Q and K are drawn once, with `max_d_k` features, from a generator seeded with `seed`; a
    given d_k uses their first d_k features, so moving the slider adds dimensions to the same
    vectors instead of drawing new ones. Without the scaling, large d_k makes every row
    nearly one-hot; with it, the rows keep about the same spread at every d_k.
    """

    def __init__(
        self,
        tokens: Sequence[str] = DEFAULT_TOKENS,
        *,
        d_k: int = 64,
        scale: bool = False,
        seed: int = 0,
        max_d_k: int = 512,
    ):
        self.tokens = [str(t) for t in tokens]
        if not self.tokens:
            raise ValueError(
                tr(
                    "tokens must name at least one token, got an empty sequence",
                )
            )
        check_positive_int("max_d_k", max_d_k)
        sizes = [2**p for p in range(int(math.log2(max_d_k)) + 1)]
        if sizes[-1] != max_d_k:
            sizes.append(max_d_k)
        if d_k not in sizes:
            raise ValueError(
                tr(
                    "d_k must be one of {sizes}, got {d_k!r}",
                    sizes=sizes,
                    d_k=d_k,
                )
            )
        generator = torch.Generator().manual_seed(seed)
        n = len(self.tokens)
        self._all_queries = torch.randn(n, max_d_k, generator=generator)
        self._all_keys = torch.randn(n, max_d_k, generator=generator)
        self.d_k = widgets.SelectionSlider(
            options=sizes, value=d_k, description="d_k", continuous_update=True
        )
        self.scale = widgets.ToggleButton(
            value=scale, description=tr("divide by √d_k"), tooltip=tr("scale the scores by 1/√d_k")
        )
        self.canvas = HeatmapCanvas()
        super().__init__([self.d_k, self.scale])
        self.redraw()

    @property
    def Q(self) -> torch.Tensor:
        """The queries at the current d_k: (n, d_k)."""
        return self._all_queries[:, : self.d_k.value]

    @property
    def K(self) -> torch.Tensor:
        """The keys at the current d_k: (n, d_k)."""
        return self._all_keys[:, : self.d_k.value]

    def scores(self) -> torch.Tensor:
        return similarity_scores(self.Q, self.K, scale=self.scale.value)

    def weights(self) -> torch.Tensor:
        return softmax(self.scores())

    def redraw(self) -> None:
        weights = self.weights()
        d_k, scaled = self.d_k.value, self.scale.value
        # Mathtext: the Japanese font has no superscript ᵀ glyph.
        formula = rf"$QK^T/\sqrt{{{d_k}}}$" if scaled else "$QK^T$"
        self.canvas.draw(
            weights, self.tokens, self.tokens, title=f"softmax({formula}), $d_k$ = {d_k}"
        )
        self.image.value = self.canvas.png()
        row_max = weights.amax(dim=-1)  # each query's largest weight
        weakest = int(row_max.argmin())
        entropy = float(row_entropy(weights).mean())
        self.show(
            markup(
                "every row's largest weight is at least <b>{weight:.3f}</b> (the least peaked "
                "row: {token}); mean row entropy <b>{entropy:.3f}</b> nats (uniform: "
                "{uniform:.3f}, one-hot: 0)",
                weight=float(row_max.min()),
                token=self.tokens[weakest],
                entropy=entropy,
                uniform=math.log(weights.shape[1]),
            )
        )

    def __repr__(self) -> str:
        return f"ScoreScalingExplorer({len(self.tokens)} tokens)"
