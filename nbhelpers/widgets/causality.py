"""Notebook 07's explorer: change one token and see which vectors move, layer by layer."""

from __future__ import annotations

from collections.abc import Sequence

import ipywidgets as widgets
import torch

from ..figures.heatmap import HeatmapCanvas
from ..gpt1 import GPT1, check_gpt1, evaluating
from ..support.language import tr
from ..support.validation import is_int
from .base import FigureExplorer
from .readout import markup


def layer_states(model: GPT1, ids: torch.Tensor, *, causal: bool = True) -> torch.Tensor:
    """[h_0, h_1, ..., h_L] for one sentence `ids` (n,), stacked: (n_layers + 1, n, d);
    causal=False leaves the mask out for this call (the model itself is not changed)."""
    return model.hidden_states(ids[None], causal=None if causal else False, every_layer=True)[
        :, 0
    ]  # as a batch of one, the way the model is usually run


class CausalityExplorer(FigureExplorer):
    """Pick a position and a replacement token: the heatmap shows, for every layer h_l and
    every position, how far the vector moved (× where it did not move at all).

    With the causal mask on, nothing before the changed position moves, in any layer.
    Untick "causal mask" to see the change leak backwards, as it would without the mask.
    """

    def __init__(
        self,
        model: GPT1,
        vocab: Sequence[str],
        sentence: Sequence[str],
        *,
        position: int = 2,
        replacement: str | None = None,
    ):
        check_gpt1(model)
        self.model = model  # used in eval mode, and left in the mode it is in
        self.vocab = [str(token) for token in vocab]
        if len(self.vocab) != model.config.vocab_size:
            raise ValueError(
                tr(
                    "vocab has {len_vocab} tokens but the model's vocab_size is {vocab_size}",
                    len_vocab=len(self.vocab),
                    vocab_size=model.config.vocab_size,
                )
            )
        self.sentence = [str(token) for token in sentence]
        unknown = [token for token in self.sentence if token not in self.vocab]
        if not self.sentence or unknown or len(self.sentence) > model.config.n_ctx:
            raise ValueError(
                tr(
                    "sentence must be 1 to n_ctx={n_ctx} tokens of vocab, got {sentence}",
                    n_ctx=model.config.n_ctx,
                    sentence=self.sentence,
                )
                + (tr(" (unknown: {unknown})", unknown=unknown) if unknown else "")
            )
        n = len(self.sentence)
        if not is_int(position) or not 0 <= position < n:
            raise ValueError(
                tr(
                    "position must be an int from 0 to {last} (counted from 0), got {position!r}",
                    last=n - 1,
                    position=position,
                )
            )
        self.ids = torch.tensor([self.vocab.index(t) for t in self.sentence], device=model.device)
        self.position = widgets.Dropdown(
            options=[(f"{i} {t}", i) for i, t in enumerate(self.sentence)],
            value=position,
            description=tr("change position"),
        )
        if replacement is not None and replacement not in self.vocab:
            raise ValueError(
                tr(
                    "replacement must be a token of vocab, got {replacement!r}",
                    replacement=replacement,
                )
            )
        self.replacement = widgets.Dropdown(
            options=[(t, v) for v, t in enumerate(self.vocab)],
            value=self.vocab.index(replacement) if replacement is not None else 0,
            description=tr("to"),
        )
        self._pick_a_different_token()
        self.causal = widgets.Checkbox(value=True, description=tr("causal mask"), indent=False)
        # A log colour scale: the changed position moves thousands of times more than the
        # later ones at initialisation, and both should be visible.
        self.canvas = HeatmapCanvas(
            figsize=(5.8, 3.8),
            vmin=None,
            vmax=None,
            cmap="magma",
            colorbar_label=tr("max |change| (log scale)"),
            log_scale=True,
        )
        # Registered before the base class's redraw, so a new position never draws a "change"
        # to the token that is already there.
        self.position.observe(lambda _: self._pick_a_different_token(), names="value")
        super().__init__([self.position, self.replacement, self.causal])
        self.redraw()

    def _pick_a_different_token(self) -> None:
        current = int(self.ids[self.position.value])
        if self.replacement.value == current:
            self.replacement.value = (current + 1) % len(self.vocab)

    def perturbed_ids(self) -> torch.Tensor:
        ids = self.ids.clone()
        ids[self.position.value] = self.replacement.value
        return ids

    def movement(self) -> torch.Tensor:
        """(n_layers + 1, n): the largest |change| of each position's vector in each h_l."""
        with evaluating(self.model):
            before = layer_states(self.model, self.ids, causal=self.causal.value)
            after = layer_states(self.model, self.perturbed_ids(), causal=self.causal.value)
        return (after - before).abs().amax(dim=-1).cpu()

    def redraw(self) -> None:
        movement = self.movement()
        i = self.position.value
        labels = list(self.sentence)
        labels[i] = f"{self.sentence[i]}→{self.vocab[self.replacement.value]}"
        self.canvas.draw(
            movement,
            [f"$h_{layer}$" for layer in range(movement.shape[0])],
            labels,
            masked=movement == 0,
            title=tr("how far each vector moved")
            if self.causal.value
            else tr("how far each vector moved (no mask)"),
            fmt="{:.3f}",
        )
        self.canvas.set_axis_labels(tr("position"), tr("layer"))
        self.image.value = self.canvas.png()
        earlier = movement[:, :i]
        if i == 0:
            verdict = tr("there is no earlier position to protect.")
        elif bool((earlier == 0).all()):
            verdict = tr("positions 0–{last} did not move at all, in any layer.", last=i - 1)
        else:
            moved = sorted(set(torch.nonzero(earlier)[:, 1].tolist()))
            verdict = tr(
                "positions {positions} moved too: without the mask, an earlier position sees "
                "the future.",
                positions=", ".join(map(str, moved)),
            )
        self.show(
            markup(
                "Changing position {position} ({label}): {verdict}",
                position=i,
                label=labels[i],
                verdict=verdict,
            )
        )

    def __repr__(self) -> str:
        return f"CausalityExplorer({len(self.sentence)} positions, {len(self.model.blocks)} blocks)"
