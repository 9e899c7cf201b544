"""Notebook 02's explorer: type a row of scores, move the temperature, see softmax(s / T)."""

from __future__ import annotations

import math
from collections.abc import Sequence

import ipywidgets as widgets
import torch

from ..attention import softmax
from ..figures.bars import BarCanvas
from ..statistics import row_entropy
from ..support.language import tr
from .base import FigureExplorer, temperature_slider
from .readout import error_markup, markup

DEFAULT_TOKENS = ("犬", "が", "河岸", "を", "歩く")
DEFAULT_SCORES = (2.0, 0.5, 1.0, -1.0, 0.0)


def parse_scores(text: str) -> list[float]:
    """Comma-separated numbers -> floats; a ValueError that quotes the piece it cannot read."""
    pieces = [piece.strip() for piece in text.replace("，", ",").split(",")]
    if pieces and pieces[-1] == "":
        pieces.pop()  # a trailing comma is harmless
    if not pieces or pieces == [""]:
        raise ValueError(
            tr(
                "type at least one score, e.g. 2, 0.5, 1",
            )
        )
    values = []
    for position, piece in enumerate(pieces, start=1):
        try:
            value = float(piece)
        except ValueError:
            raise ValueError(
                tr(
                    "score {position} ({piece!r}) is not a number; type numbers separated "
                    "by commas, e.g. 2, 0.5, 1",
                    position=position,
                    piece=piece,
                )
            ) from None
        if math.isnan(value) or value == math.inf:
            raise ValueError(
                tr(
                    "score {position} ({piece!r}) must be finite or -inf (masked)",
                    position=position,
                    piece=piece,
                )
            )
        values.append(value)
    if all(v == -math.inf for v in values):
        raise ValueError(
            tr(
                "at least one score must be finite: every key is masked (-inf)",
            )
        )
    return values


class SoftmaxExplorer(FigureExplorer):
    """A row of scores s (editable text) and a temperature T; bars of softmax(s / T).

    The probabilities use the stable softmax of `nbhelpers`, so scores such as 1000, 999
    work. Labels are the tokens while the number of scores matches them, else 1, 2, 3, ...
    """

    def __init__(
        self,
        scores: Sequence[float] = DEFAULT_SCORES,
        tokens: Sequence[str] = DEFAULT_TOKENS,
        *,
        temperature: float = 1.0,
    ):
        self.tokens = [str(t) for t in tokens]
        try:
            text = ", ".join(f"{float(s):g}" for s in scores)
            self.values: list[float] = parse_scores(text)
        except (TypeError, ValueError) as error:
            raise ValueError(
                tr(
                    "scores must be a sequence of numbers: {error}",
                    error=error,
                )
            ) from None
        self.scores_text = widgets.Text(
            value=text,
            description=tr("scores"),
            continuous_update=False,  # parse on Enter or when leaving the box, not per keystroke
            layout=widgets.Layout(width="22em"),
        )
        self.temperature = temperature_slider(temperature, low=0.05, step=0.05)
        self.canvas = BarCanvas(blit=True)
        super().__init__([self.scores_text, self.temperature])
        self.redraw()

    def labels(self) -> list[str]:
        if len(self.values) == len(self.tokens):
            return list(self.tokens)
        return [str(i) for i in range(1, len(self.values) + 1)]

    def probabilities(self, values: Sequence[float] | None = None) -> torch.Tensor:
        """softmax(s / T) of `values` (default: the scores shown)."""
        values = self.values if values is None else list(values)
        finite = torch.tensor([math.isfinite(v) for v in values])
        scaled = torch.tensor(values, dtype=torch.float32) / self.temperature.value
        if not torch.isfinite(scaled[finite]).all():
            raise ValueError(
                tr(
                    "a score divided by the temperature does not fit in float32; use "
                    "smaller scores",
                )
            )
        return softmax(scaled)

    def redraw(self) -> None:
        try:
            values = parse_scores(self.scores_text.value)
            probabilities = self.probabilities(values)
        except ValueError as error:
            # Keep the last good chart; say what is wrong instead of raising in a callback.
            self.show(error_markup(tr("Could not read the scores: {error}", error=error)))
            return
        self.values = values
        T = self.temperature.value
        labels = self.labels()
        top = int(probabilities.argmax())
        self.canvas.draw(
            probabilities,
            labels,
            title=f"softmax(s / {T:.2f})",
            ylabel=tr("probability"),
            ylim=(0.0, 1.05),
            highlight=top,
        )
        self.image.value = self.canvas.png()
        entropy = float(row_entropy(probabilities))
        self.show(
            markup(
                "largest probability <b>{probability:.3f}</b> on <b>{token}</b>; entropy "
                "{entropy:.3f} nats (uniform: {uniform:.3f}); sum = {total:.3f}",
                probability=float(probabilities[top]),
                token=labels[top],
                entropy=entropy,
                uniform=math.log(len(labels)),
                total=float(probabilities.sum()),
            )
        )

    def __repr__(self) -> str:
        return "SoftmaxExplorer()"
