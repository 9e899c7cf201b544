"""Notebook 05's explorer: the same weights split into 1, 2, 4, ... heads."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import ipywidgets as widgets
import torch

from ..attention import attention
from ..figures.heads import HeadGridCanvas
from ..masks import causal_mask
from ..multihead import MultiHeadAttention, head_counts, merge_heads, split_heads
from ..support.language import ntr, tr
from .base import FigureExplorer
from .readout import markup


class MultiHeadExplorer(FigureExplorer):
    """One set of projections W_Q, W_K, W_V, W_O (d_model x d_model each) viewed as n_h heads.

    The heads slider offers the divisors of d_model only. Changing h changes how the features
    are split, not the parameters: every head count uses the same four matrices. The grid
    shows each head's weights, then Concat(head_0 ... head_{n_h-1}) and the output after W_O; the
    selected head is framed in both.
    """

    def __init__(
        self,
        tokens: Sequence[str],
        x,
        *,
        n_heads: int | None = None,
        causal: bool = False,
        module: MultiHeadAttention | None = None,
        seed: int = 0,
    ):
        self.tokens = [str(t) for t in tokens]
        self.x = torch.as_tensor(x, dtype=torch.float32).detach().cpu()
        n = len(self.tokens)
        if self.x.dim() != 2 or self.x.shape[0] != n:
            raise ValueError(
                tr(
                    "x must be (n, d_model) with n={n} tokens, got shape {x_shape}",
                    n=n,
                    x_shape=tuple(self.x.shape),
                )
            )
        d_model = self.x.shape[1]
        counts = head_counts(d_model)
        if n_heads is None:
            n_heads = max(h for h in counts if h <= 4)
        if n_heads not in counts:
            raise ValueError(
                tr(
                    "n_heads={n_heads!r} does not divide d_model={d_model}; head counts that "
                    "work: {counts}",
                    n_heads=n_heads,
                    d_model=d_model,
                    counts=counts,
                )
            )
        if module is None:
            with torch.random.fork_rng(devices=[]):  # leave the notebook's RNG stream alone
                torch.manual_seed(seed)
                module = MultiHeadAttention(d_model, 1)
        if not isinstance(module, MultiHeadAttention) or module.d_model != d_model:
            raise ValueError(
                tr("module must be a MultiHeadAttention with d_model={d_model}", d_model=d_model)
            )
        self.state = {k: v.detach().cpu().float() for k, v in module.state_dict().items()}
        self.d_model = d_model
        self.heads = widgets.SelectionSlider(
            options=counts, value=n_heads, description=tr("heads n_h"), continuous_update=True
        )
        self.head = widgets.Dropdown(
            options=self._head_options(n_heads), value=0, description=tr("head")
        )
        self.causal = widgets.Checkbox(value=causal, description=tr("causal mask"))
        self._canvases: dict[int, HeadGridCanvas] = {}
        self._syncing = False
        super().__init__([self.heads, self.head, self.causal])
        self.redraw()
        self._prepare_later()

    @staticmethod
    def _head_options(h: int) -> list[tuple[str, int]]:
        return [(tr("head {k}", k=i), i) for i in range(h)]

    def _on_change(self, change) -> None:
        if self._syncing:
            return
        if change["owner"] is self.heads:
            self._syncing = True  # new options would otherwise redraw once more
            try:
                selected = min(self.head.value, change["new"] - 1)
                self.head.options = self._head_options(change["new"])
                self.head.value = selected
            finally:
                self._syncing = False
        self.redraw()

    def module(self, n_heads: int | None = None) -> MultiHeadAttention:
        """A MultiHeadAttention with n_h heads and this explorer's (shared) weights."""
        h = self.heads.value if n_heads is None else n_heads
        module = MultiHeadAttention(self.d_model, h, causal=self.causal.value)
        module.load_state_dict(self.state)
        return module

    @torch.no_grad()
    def compute(
        self, n_heads: int | None = None
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """(per-head weights (h, n, n), Concat(heads) (n, d_model), output (n, d_model)),
        step by step, so that the concatenated matrix before W_O can be shown too; for
        `n_heads` heads, by default the slider's."""
        module = self.module(n_heads)
        q, k, v = (
            split_heads(W(self.x), module.n_heads) for W in (module.W_Q, module.W_K, module.W_V)
        )
        n = self.x.shape[-2]
        heads, weights = attention(q, k, v, causal_mask(n) if module.causal else None)
        concat = merge_heads(heads)
        return weights, concat, module.W_O(concat)

    @property
    def canvas(self) -> HeadGridCanvas:
        """The canvas that draws the current number of heads (one is kept per h)."""
        return self._canvases.setdefault(self.heads.value, HeadGridCanvas())

    def _prepare_later(self) -> None:
        """In a kernel, prepare() once the cell has finished: the kernel's event loop runs it
        before the learner can reach the slider, and the cell returns at once. Elsewhere
        (plain Python, tests) each head count is laid out on its first visit."""
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        loop.call_soon(self.prepare)

    def prepare(self) -> None:
        """Lay out and render a canvas for every other head count now, so that the slider's
        first visit to each is a repaint, not a new figure (a few hundred ms each)."""
        if getattr(self, "_closed", False):
            return
        for h in self.heads.options:
            if h not in self._canvases:
                self._canvases[h] = HeadGridCanvas()
                self._draw(self._canvases[h], h, min(self.head.value, h - 1))
                self._canvases[h].png()

    def _draw(self, canvas: HeadGridCanvas, h: int, selected: int) -> torch.Tensor:
        """Draw n_h heads on `canvas`, head `selected` framed; returns their weights."""
        weights, concat, output = self.compute(h)
        n = len(self.tokens)
        masked = torch.isneginf(causal_mask(n)) if self.causal.value else None
        canvas.draw(
            weights,
            concat,
            output,
            self.tokens,
            masked=masked,
            selected=selected,
            title=ntr(
                "n_h = {n} head of d_head = {d_head}",
                "n_h = {n} heads of d_head = {d_head}",
                h,
                d_head=self.d_model // h,
            ),
        )
        return weights

    def redraw(self) -> None:
        h, selected = self.heads.value, self.head.value
        weights = self._draw(self.canvas, h, selected)
        self.image.value = self.canvas.png()
        last = weights[selected, -1]
        top = int(last.argmax())
        parameters = sum(v.numel() for v in self.state.values())
        self.show(markup(
            "head {head} (of {h}, counted from 0) works on features {first}–{last}; its query "
            "<b>{query}</b> puts {weight:.2f} on <b>{key}</b>. Parameters: {parameters} for every "
            "n_h.",
            head=selected, h=h, first=selected * self.d_model // h,
            last=(selected + 1) * self.d_model // h - 1, query=self.tokens[-1],
            weight=float(last[top]), key=self.tokens[top], parameters=parameters,
        ))  # fmt: skip

    def __repr__(self) -> str:
        return f"MultiHeadExplorer({len(self.tokens)} tokens, d_model={self.d_model})"
