"""Notebook 09's explorer: a model's next-token distribution next to the grammar's true one."""

from __future__ import annotations

import math
from collections.abc import Sequence

import ipywidgets as widgets
import torch

from ..corpus import EOS, JapaneseGrammar
from ..experiments.heldout import check_model_fits_grammar
from ..figures.bars import BarCanvas
from ..figures.next_token import next_token_figure
from ..figures.style import RED
from ..gpt1 import GPT1
from ..inference import next_token_distribution
from ..statistics import kl_divergence
from ..support.language import tr
from .base import FigureExplorer, temperature_slider
from .readout import error_markup, markup

EXAMPLE_PREFIXES = ("", "犬 が 河岸 を", "鳥 が", "魚 が 川 を", "猫 が 公園 を 歩く ので")
ERROR_COLOUR = RED


class NextTokenExplorer(FigureExplorer):
    """Type or pick a prefix; see P(next token | prefix) from the model and from the grammar.

    The temperature and top-k sliders reshape the model's distribution (what sampling would
    draw from); "generate" samples one token from it and appends it to the prefix, so clicking
    repeatedly writes a sentence token by token until <EOS>.
    """

    def __init__(
        self,
        model: GPT1,
        grammar: JapaneseGrammar,
        prefix: str = "犬 が 河岸 を",
        *,
        examples: Sequence[str] = EXAMPLE_PREFIXES,
        top: int = 8,
        seed: int = 0,
    ):
        check_model_fits_grammar(model, grammar)
        self.model, self.grammar, self.tokenizer = model, grammar, grammar.tokenizer
        self.top = top
        self.generator = torch.Generator().manual_seed(seed)
        vocab = self.tokenizer.vocab_size
        self.prefix = widgets.Text(
            value=prefix,
            description=tr("prefix"),
            continuous_update=False,
            layout=widgets.Layout(width="340px"),
        )
        self.examples = widgets.Dropdown(
            options=[(text or tr("(type your own)"), text) for text in examples],
            value=examples[0] if examples else None,
            description=tr("pick"),
            layout=widgets.Layout(width="260px"),
        )
        self.temperature = temperature_slider(1.0, low=0.1, high=3.0)
        self.top_k = widgets.IntSlider(value=vocab, min=1, max=vocab, description="top-k")
        self.generate_button = widgets.Button(description=tr("generate"), icon="play")
        self.generate_button.on_click(self._generate_one)
        self.canvas = BarCanvas(figsize=(7.2, 3.2), blit=True)
        self.status = ""
        super().__init__([self.prefix, self.examples, self.temperature, self.top_k])
        # Two rows of controls: the prefix on top, the sampling settings below.
        self.children = (
            widgets.VBox(
                [
                    widgets.HBox([self.prefix, self.examples, self.generate_button]),
                    widgets.HBox([self.temperature, self.top_k]),
                ]
            ),
            *self.children[1:],
        )
        self.redraw()

    def _on_change(self, change) -> None:
        if change["owner"] is self.examples:
            if change["new"]:
                self.prefix.value = change["new"]  # redraws through the prefix's observer
            return
        self.redraw()

    @property
    def top_k_value(self) -> int | None:
        """The slider's k, or None when it keeps the whole vocabulary."""
        k = self.top_k.value
        return None if k >= self.tokenizer.vocab_size else k

    def prefix_ids(self) -> torch.Tensor:
        """<SOS> and the prefix's ids (ValueError naming an unknown token)."""
        return self.tokenizer.encode(self.prefix.value)

    def distributions(self) -> tuple[torch.Tensor, torch.Tensor | None]:
        """(the model's distribution at the current temperature and top-k, the true one or None
        when the grammar cannot produce the prefix)."""
        ids = self.prefix_ids()
        model_probs = next_token_distribution(
            self.model, ids.to(self.model.device), self.temperature.value, self.top_k_value
        ).cpu()
        try:
            true_probs = self.grammar.true_next_token_distribution(ids)
        except ValueError:
            true_probs = None
        return model_probs, true_probs

    def _ended(self) -> bool:
        tokens = self.prefix.value.split()
        return bool(tokens) and tokens[-1] == EOS

    def redraw(self) -> None:
        self.generate_button.disabled = self._ended()
        if self._ended():
            self.show(markup("the sentence is complete: {sentence}", sentence=self.prefix.value))
            return
        try:
            model_probs, true_probs = self.distributions()
        except ValueError as error:  # an unknown token, or a prefix longer than the context
            self.show(error_markup(str(error)))
            return
        T, k = self.temperature.value, self.top_k_value
        settings = f"T = {T:.1f}" + (f", top-{k}" if k else "")
        shown = self.prefix.value.strip() or "<SOS>"
        next_token_figure(
            model_probs,
            true_probs,
            self.tokenizer.tokens,
            top=self.top,
            title=tr("P(next | {prefix})   model at {settings}", prefix=shown, settings=settings),
            canvas=self.canvas,
        )
        self.image.value = self.canvas.png()
        best = int(model_probs.argmax())
        text = markup(
            "model: most likely <b>{token}</b> ({probability:.2f})",
            token=self.tokenizer.tokens[best],
            probability=float(model_probs[best]),
        )
        if true_probs is None:
            text += markup(
                "; true: the grammar cannot produce this prefix, so there is no true distribution"
            )
        else:
            kl = kl_divergence(true_probs, model_probs)
            true_best = int(true_probs.argmax())
            # said apart from the markup call, so that the extractor finds both texts
            if math.isinf(kl):
                kl_text = tr("∞: the model rules out a possible token")
            else:
                kl_text = tr("{kl:.4f} nats", kl=kl)
            text += markup(
                "; true: <b>{token}</b> ({probability:.2f}); KL(true ‖ model) = {kl}",
                token=self.tokenizer.tokens[true_best],
                probability=float(true_probs[true_best]),
                kl=kl_text,
            )
        self.show(text, f"<br>{self.status}" if self.status else "")
        self.status = ""  # shown once, right after "generate"

    def _generate_one(self, _button=None) -> None:
        """Sample one token from the model's current distribution and append it."""
        if self._ended():
            return
        try:
            model_probs, _ = self.distributions()
        except ValueError:
            return  # the readout already says what is wrong with the prefix
        token_id = int(torch.multinomial(model_probs, 1, generator=self.generator))
        token = self.tokenizer.tokens[token_id]
        self.status = markup("generated <b>{token}</b>", token=token)
        self.prefix.value = f"{self.prefix.value.strip()} {token}".strip()

    def generate(self) -> None:
        """What the "generate" button does (for scripts and tests)."""
        self._generate_one()

    def __repr__(self) -> str:
        return f"NextTokenExplorer({self.tokenizer.vocab_size} tokens)"
