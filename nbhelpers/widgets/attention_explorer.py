"""Notebook 03's explorer: one query's scores, weights and weighted sum of the values."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import NamedTuple

import ipywidgets as widgets
import torch

from ..attention import similarity_scores, softmax
from ..figures.attention_step import MAX_FEATURES, MAX_KEYS, AttentionStepCanvas
from ..support.language import tr
from ..support.validation import check_positive_int, is_int, is_number
from .base import FigureExplorer, temperature_slider
from .readout import markup

D_K_RANGE = (1, 64)
TEMPERATURE_RANGE = (0.1, 5.0)
SEED_RANGE = (0, 99)


class AttentionStep(NamedTuple):
    """Everything the explorer shows, for all queries at once (rows are queries)."""

    X: torch.Tensor  # (n, d_model) token vectors
    Q: torch.Tensor  # (n, d_k)
    K: torch.Tensor  # (n, d_k)
    V: torch.Tensor  # (n, d_v)
    scores: torch.Tensor  # (n, n) Q Kᵀ / sqrt(d_k)
    weights: torch.Tensor  # (n, n) softmax(scores / temperature)
    output: torch.Tensor  # (n, d_v) weights @ V


def _check_int(name: str, value, low: int, high: int) -> int:
    if not is_int(value):
        raise TypeError(
            tr("{name} must be an int, got {got_type}", name=name, got_type=type(value).__name__)
        )
    if not low <= value <= high:
        raise ValueError(
            tr(
                "{name} must be in [{low}, {high}], got {value}",
                name=name,
                low=low,
                high=high,
                value=value,
            )
        )
    return value


def attention_step(
    n_tokens: int, d_model: int, d_k: int, d_v: int, temperature: float, seed: int
) -> AttentionStep:
    """Random token vectors X and projections W_Q, W_K, W_V drawn from `seed`, then attention.

    X and W_V are drawn before W_Q and W_K, so changing d_k changes the scores but leaves the
    value vectors as they were. The projections are scaled by 1/sqrt(d_model) so that the
    entries of Q, K and V have variance about 1, whatever d_model is.
    """
    for name, size in (("n_tokens", n_tokens), ("d_model", d_model), ("d_k", d_k), ("d_v", d_v)):
        check_positive_int(name, size)
    if not temperature > 0:
        raise ValueError(
            tr("temperature must be positive, got {temperature}", temperature=temperature)
        )
    generator = torch.Generator().manual_seed(seed)
    X = torch.randn(n_tokens, d_model, generator=generator)
    W_V = torch.randn(d_model, d_v, generator=generator) / math.sqrt(d_model)
    W_Q = torch.randn(d_model, d_k, generator=generator) / math.sqrt(d_model)
    W_K = torch.randn(d_model, d_k, generator=generator) / math.sqrt(d_model)
    Q, K, V = X @ W_Q, X @ W_K, X @ W_V
    scores = similarity_scores(Q, K)
    weights = softmax(scores / temperature)
    return AttentionStep(X, Q, K, V, scores, weights, weights @ V)


class AttentionExplorer(FigureExplorer):
    """Pick a query token; see its scores, its weights and o_i = Σ_j a_ij v_j.

    Sliders: d_k (the size of queries and keys; the scores are divided by sqrt(d_k)), the
    temperature T of softmax(scores / T), and the seed of the random vectors and projections.
    """

    def __init__(
        self,
        tokens: Sequence[str] = ("犬", "が", "河岸", "を", "歩く"),
        *,
        d_model: int = 8,
        d_k: int = 4,
        d_v: int = 4,
        temperature: float = 1.0,
        seed: int = 0,
        query: int | None = None,
    ):
        if isinstance(tokens, str) or not isinstance(tokens, Sequence):
            raise TypeError(
                tr(
                    "tokens must be a sequence of strings, got {tokens_type}",
                    tokens_type=type(tokens).__name__,
                )
            )
        self.tokens = [str(t) for t in tokens]
        _check_int("len(tokens)", len(self.tokens), 1, MAX_KEYS)
        self.d_model = _check_int("d_model", d_model, 1, 1024)
        self.d_v = _check_int("d_v", d_v, 1, MAX_FEATURES)
        _check_int("d_k", d_k, *D_K_RANGE)
        _check_int("seed", seed, *SEED_RANGE)
        if not is_number(temperature):
            raise TypeError(
                tr(
                    "temperature must be a number, got {temperature_type}",
                    temperature_type=type(temperature).__name__,
                )
            )
        if not TEMPERATURE_RANGE[0] <= temperature <= TEMPERATURE_RANGE[1]:
            raise ValueError(
                tr(
                    "temperature must be in [{low}, {high}], got {temperature}",
                    low=TEMPERATURE_RANGE[0],
                    high=TEMPERATURE_RANGE[1],
                    temperature=temperature,
                )
            )
        last = len(self.tokens) - 1
        query = last if query is None else _check_int("query", query, 0, last)

        self.query = widgets.Dropdown(
            options=[(t, i) for i, t in enumerate(self.tokens)],
            value=query,
            description=tr("query"),
        )
        self.d_k = widgets.IntSlider(
            value=d_k, min=D_K_RANGE[0], max=D_K_RANGE[1], description="d_k"
        )
        self.temperature = temperature_slider(
            temperature, low=TEMPERATURE_RANGE[0], high=TEMPERATURE_RANGE[1]
        )
        self.seed = widgets.IntSlider(
            value=seed, min=SEED_RANGE[0], max=SEED_RANGE[1], description=tr("seed")
        )
        self.canvas = AttentionStepCanvas()
        self._step: AttentionStep | None = None
        self._step_key: tuple | None = None
        super().__init__([self.query, self.d_k, self.temperature, self.seed])
        self.redraw()

    def step(self) -> AttentionStep:
        """The tensors behind the current picture (recomputed only when a slider moved)."""
        key = (self.d_k.value, self.temperature.value, self.seed.value)
        if key != self._step_key:
            self._step = attention_step(
                len(self.tokens), self.d_model, self.d_k.value, self.d_v, *key[1:]
            )
            self._step_key = key
        return self._step

    def redraw(self) -> None:
        step = self.step()
        i = self.query.value
        T = self.temperature.value
        self.canvas.draw(
            step.scores,
            step.weights,
            step.V,
            i,
            self.tokens,
            self.tokens,
            title=tr(
                "query i = {token}   ·   d_k = {d_k}   ·   softmax(s / T) with T = "
                "{temperature:.1f}   ·   seed {seed}",
                token=self.tokens[i],
                d_k=self.d_k.value,
                temperature=T,
                seed=self.seed.value,
            ),
        )
        self.image.value = self.canvas.png()
        row = step.weights[i]
        top = int(row.argmax())
        output = ", ".join(f"{x:+.2f}" for x in step.output[i].tolist())
        self.show(
            markup(
                "query <b>{query}</b>: largest weight {weight:.2f} on <b>{top}</b>; weights sum "
                "to {total:.3f}; o<sub>i</sub> = Σ<sub>j</sub> a<sub>ij</sub> v<sub>j</sub> = "
                "[{output}]",
                query=self.tokens[i],
                weight=row[top],
                top=self.tokens[top],
                total=row.sum(),
                output=output,
            )
        )

    def __repr__(self) -> str:
        return f"AttentionExplorer({len(self.tokens)} tokens, d_model={self.d_model})"
