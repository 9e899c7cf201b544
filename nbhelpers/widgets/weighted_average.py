"""Notebook 03's second explorer: o_i as a point among 2-dimensional values, moving as the
temperature and the query change its weights."""

from __future__ import annotations

import math
from collections.abc import Sequence

import ipywidgets as widgets
import torch

from ..attention import similarity_scores, softmax
from ..figures.weighted_average import WeightedAverageCanvas
from ..statistics import row_entropy
from ..support.language import tr
from .base import FigureExplorer, temperature_slider
from .readout import markup


class WeightedAverageExplorer(FigureExplorer):
    """Queries Q (n, d_k), keys K (m, d_k) and values V (m, 2) over a sentence; pick a
    query and a temperature T and watch o_i = Σ_j softmax(q_i · k_j / (T √d_k)) v_j move."""

    def __init__(self, tokens: Sequence[str], Q, K, V, *, query: int = 0, temperature=1.0):
        self.tokens = [str(t) for t in tokens]
        self.Q, self.K, self.V = (torch.as_tensor(t, dtype=torch.float32).cpu() for t in (Q, K, V))
        m = len(self.tokens)
        if self.K.shape[0] != m or self.V.shape != (m, 2):
            raise ValueError(
                tr(
                    "K must have {m} rows and V must be ({m}, 2) for {m} tokens, got K {K_shape} "
                    "and V {V_shape}",
                    m=m,
                    K_shape=tuple(self.K.shape),
                    V_shape=tuple(self.V.shape),
                )
            )
        if not 0 <= query < self.Q.shape[0]:
            raise ValueError(
                tr(
                    "query must be a row of Q in [0, {n}), got {query}",
                    n=self.Q.shape[0],
                    query=query,
                )
            )
        self.temperature = temperature_slider(temperature, low=0.1)
        self.query = widgets.Dropdown(
            options=[(self._query_label(i), i) for i in range(self.Q.shape[0])],
            value=query,
            description=tr("query"),
        )
        self.canvas = WeightedAverageCanvas(blit=True)
        super().__init__([self.query, self.temperature])
        self.redraw()

    def _query_label(self, i: int) -> str:
        """Query i, counted from 0 as everywhere in the course, with its token when the
        queries are the tokens' own (self-attention)."""
        if self.Q.shape[0] == len(self.tokens):
            return tr("query {i}: {token}", i=i, token=self.tokens[i])
        return tr("query {i}", i=i)

    @classmethod
    def demo(cls) -> WeightedAverageExplorer:
        """The running example with seeded random queries, keys and 2-D values."""
        g = torch.Generator().manual_seed(0)
        Q, K, V = (torch.randn(5, d, generator=g) for d in (4, 4, 2))
        return cls(["犬", "が", "河岸", "を", "歩く"], Q, K, V, query=4)

    def weights(self) -> torch.Tensor:
        """The chosen query's weights over the keys, softmax(scores / T)."""
        scores = similarity_scores(self.Q[self.query.value : self.query.value + 1], self.K)[0]
        return softmax(scores / self.temperature.value)

    def output(self) -> torch.Tensor:
        return self.weights() @ self.V

    def redraw(self) -> None:
        weights = self.weights()
        T = self.temperature.value
        self.canvas.draw(
            self.V,
            weights,
            self.tokens,
            title=tr(
                "$o_i$ for {query}, T = {temperature:g}",
                query=self._query_label(self.query.value),
                temperature=T,
            ),
        )
        self.image.value = self.canvas.png()
        top = int(weights.argmax())
        x, y = self.output().tolist()
        entropy = float(row_entropy(weights))
        self.show(
            markup(
                "o<sub>i</sub> = ({x:+.2f}, {y:+.2f}), pulled most by <b>{token}</b> "
                "({weight:.2f}); entropy of the weights {entropy:.2f} nats "
                "(uniform: {uniform:.2f})",
                x=x,
                y=y,
                token=self.tokens[top],
                weight=float(weights[top]),
                entropy=entropy,
                uniform=math.log(len(self.tokens)),
            )
        )

    def __repr__(self) -> str:
        return f"WeightedAverageExplorer({len(self.tokens)} values)"
