"""Notebook 06's explorer: choose the tokens of a sentence, see U, W_e and h_0 = U W_e + W_p."""

from __future__ import annotations

from collections.abc import Sequence

import ipywidgets as widgets
import torch

from ..figures.embedding import EmbeddingCanvas
from ..gpt1 import one_hot
from ..support.language import tr
from ..support.validation import check_positive_int
from .base import FigureExplorer
from .readout import markup

DEFAULT_VOCAB = ("犬", "猫", "鳥", "が", "河岸", "公園", "を", "歩く", "走る")
DEFAULT_SENTENCE = ("犬", "が", "河岸", "を", "歩く")


def _matrix(name: str, values, shape_text: str) -> torch.Tensor:
    if not isinstance(values, torch.Tensor):
        raise TypeError(
            tr(
                "{name} must be a torch.Tensor {shape_text}, got {values_type}",
                name=name,
                shape_text=shape_text,
                values_type=type(values).__name__,
            )
        )
    if not values.is_floating_point() or values.dim() != 2:
        raise ValueError(
            tr(
                "{name} must be a 2-D floating-point tensor {shape_text}, got dtype "
                "{values_dtype} and shape {values_shape}",
                name=name,
                shape_text=shape_text,
                values_dtype=values.dtype,
                values_shape=tuple(values.shape),
            )
        )
    return values.detach().to("cpu", torch.float32)


class EmbeddingExplorer(FigureExplorer):
    """One dropdown per position of a sentence picks its token from a small vocabulary.

    The figure shows the one-hot rows U, the rows of W_e that they select (outlined in the
    position's colour, the others faded) and h_0 = U W_e + W_p. Untick "add W_p" to see why
    the position embedding is needed: a token used twice then gives two identical rows of h_0.
    W_e and W_p are random unless given (they are learned in a real model).
    """

    def __init__(
        self,
        vocab: Sequence[str] = DEFAULT_VOCAB,
        sentence: Sequence[str] = DEFAULT_SENTENCE,
        *,
        W_e: torch.Tensor | None = None,
        W_p: torch.Tensor | None = None,
        d_model: int = 6,
        seed: int = 0,
    ):
        self.vocab = [str(token) for token in vocab]
        if len(self.vocab) < 2 or len(set(self.vocab)) != len(self.vocab):
            raise ValueError(
                tr("vocab must hold at least 2 distinct tokens, got {vocab}", vocab=self.vocab)
            )
        sentence = [str(token) for token in sentence]
        unknown = [token for token in sentence if token not in self.vocab]
        if not sentence or unknown:
            raise ValueError(
                tr(
                    "sentence must be 1 or more tokens of the vocabulary {vocab}, got {sentence}",
                    vocab=self.vocab,
                    sentence=sentence,
                )
                + (tr(" (unknown: {unknown})", unknown=unknown) if unknown else "")
            )
        check_positive_int("d_model", d_model)
        n_vocab, n = len(self.vocab), len(sentence)
        generator = torch.Generator().manual_seed(seed)
        if W_e is None:
            W_e = torch.randn(n_vocab, d_model, generator=generator)
        self.W_e = _matrix("W_e", W_e, f"(n_vocab={n_vocab}, d)")
        if self.W_e.shape[0] != n_vocab:
            raise ValueError(
                tr(
                    "W_e must have one row per vocabulary token, (n_vocab={n_vocab}, d), "
                    "got {W_e_shape}",
                    n_vocab=n_vocab,
                    W_e_shape=tuple(self.W_e.shape),
                )
            )
        d = self.W_e.shape[1]
        if W_p is None:
            W_p = 0.5 * torch.randn(n, d, generator=generator)
        self.W_p = _matrix("W_p", W_p, f"(n_ctx >= {n}, d={d})")
        if self.W_p.shape[0] < n or self.W_p.shape[1] != d:
            raise ValueError(
                tr(
                    "W_p must have a row for each of the {n} positions and d={d} columns, got "
                    "{W_p_shape}",
                    n=n,
                    d=d,
                    W_p_shape=tuple(self.W_p.shape),
                )
            )
        options = [(token, v) for v, token in enumerate(self.vocab)]
        self.token_pickers = [
            widgets.Dropdown(
                options=options,
                value=self.vocab.index(token),
                description=str(i),  # positions count from 0
                layout=widgets.Layout(width="105px"),
                style={"description_width": "14px"},
            )
            for i, token in enumerate(sentence)
        ]
        self.positions = widgets.Checkbox(value=True, description=tr("add W_p"), indent=False)
        self.canvas = EmbeddingCanvas()
        super().__init__([*self.token_pickers, self.positions])
        self.redraw()

    def ids(self) -> torch.Tensor:
        """The chosen tokens as 0-based ids (row i of W_e is token id i)."""
        return torch.tensor([picker.value for picker in self.token_pickers])

    def tokens(self) -> list[str]:
        return [self.vocab[v] for v in self.ids().tolist()]

    def U(self) -> torch.Tensor:
        return one_hot(self.ids(), len(self.vocab))

    def h0(self) -> torch.Tensor:
        """U W_e, plus W_p[:n] when "add W_p" is ticked."""
        h = self.U() @ self.W_e
        return h + self.W_p[: h.shape[0]] if self.positions.value else h

    def redraw(self) -> None:
        ids = self.ids()
        self.canvas.draw(
            ids,
            self.W_e,
            self.W_p,
            self.vocab,
            position_labels=[f"{i} {t}" for i, t in enumerate(self.tokens())],
            positions=self.positions.value,
        )
        self.image.value = self.canvas.png()
        self.show(self._describe(ids.tolist()))

    def _describe(self, ids: list[int]) -> str:
        rows = ", ".join(str(v + 1) for v in ids)
        text = markup(
            "U·W_e picks rows {rows} of W_e (1-based; Python indices {indices}).",
            rows=rows,
            indices=", ".join(map(str, ids)),
        )
        for v in sorted(set(ids)):
            where = [i for i, w in enumerate(ids) if w == v]
            if len(where) > 1:
                places = tr(" and ").join(map(str, where))
                text += markup(
                    " <b>{token}</b> sits at positions {places}: ",
                    token=self.vocab[v],
                    places=places,
                ) + (
                    markup(
                        "the same row of W_e, but different rows of h_0, since W_p adds a "
                        "different vector at each position."
                    )
                    if self.positions.value
                    else markup(
                        "identical rows of h_0 — without W_p the model cannot tell "
                        "these positions apart."
                    )
                )
        return text

    def __repr__(self) -> str:
        return (
            f"EmbeddingExplorer({len(self.token_pickers)} positions, "
            f"vocabulary of {len(self.vocab)})"
        )
