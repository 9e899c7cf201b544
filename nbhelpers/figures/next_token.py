"""Notebook 09's bars: a model's next-token distribution beside the grammar's true one."""

from __future__ import annotations

from collections.abc import Sequence

import torch
from matplotlib.figure import Figure

from ..support.language import tr
from .bars import BarCanvas
from .style import course_font


def top_tokens(model_probs: torch.Tensor, true_probs: torch.Tensor | None, top: int) -> list[int]:
    """The `top` token ids that are most likely under either distribution, most likely first."""
    score = model_probs if true_probs is None else torch.maximum(model_probs, true_probs)
    order = sorted(range(score.numel()), key=lambda i: (-float(score[i]), i))  # stable on ties
    return order[: min(top, score.numel())]


@course_font
def next_token_figure(
    model_probs,
    true_probs,
    tokens: Sequence[str],
    *,
    top: int = 8,
    title: str | None = None,
    canvas: BarCanvas | None = None,
) -> Figure:
    """Bars of the `top` most likely next tokens: the model's probabilities and the true ones
    (None when unknown: drawn as zeros)."""
    model_probs = torch.as_tensor(model_probs, dtype=torch.float64).detach().cpu().reshape(-1)
    if model_probs.numel() != len(tokens):
        raise ValueError(
            tr(
                "model_probs has {model_probs_size} values but there are {len_tokens} tokens",
                model_probs_size=model_probs.numel(),
                len_tokens=len(tokens),
            )
        )
    if true_probs is not None:
        true_probs = torch.as_tensor(true_probs, dtype=torch.float64).detach().cpu().reshape(-1)
        if true_probs.shape != model_probs.shape:
            raise ValueError(
                tr(
                    "true_probs has {true_probs_size} values but there are {len_tokens} tokens",
                    true_probs_size=true_probs.numel(),
                    len_tokens=len(tokens),
                )
            )
    chosen = top_tokens(model_probs, true_probs, top)
    truth = true_probs[chosen] if true_probs is not None else torch.zeros(len(chosen))
    canvas = canvas or BarCanvas(figsize=(7.2, 3.2))
    return canvas.draw(
        {tr("model"): model_probs[chosen], tr("true"): truth},
        [tokens[i] for i in chosen],
        title=title,
        ylabel=tr("P(next token)"),
        ylim=(0.0, 1.15),  # room above a bar of 1 for its label
    )
