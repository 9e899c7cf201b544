"""Notebook 06's BPE explorer: a merges slider over a BPE learned on the grammar's sentences,
written without spaces."""

from __future__ import annotations

from collections.abc import Sequence

import ipywidgets as widgets

from ..corpus import JapaneseGrammar
from ..corpus.bpe import UNITS, learn_bpe
from ..figures.tokens import BPECanvas, bpe_curve, token_text
from ..support.language import tr
from ..support.validation import check_positive_int
from .base import FigureExplorer
from .readout import markup, markup_n

DEFAULT_SENTENCES = ("犬が河岸を歩く", "毎朝小さな子供が静かな川をゆっくり泳ぐ")


class BPEExplorer(FigureExplorer):
    """Slide the number of merges and watch the sentences' tokens grow from characters (or
    UTF-8 bytes) into words, and past them; the readout lists the latest merges."""

    def __init__(
        self,
        sentences: Sequence[str] = DEFAULT_SENTENCES,
        *,
        corpus: Sequence[str] | None = None,
        n_merges: int = 120,
        corpus_size: int = 2000,
        seed: int = 0,
    ):
        """`corpus`: the texts to learn from (notebook 06 passes its own); by default
        `corpus_size` of the grammar's sentences, sampled with `seed`, without spaces."""
        check_positive_int("n_merges", n_merges)
        if corpus is None:
            check_positive_int("corpus_size", corpus_size)
            corpus = ["".join(s) for s in JapaneseGrammar().sample(corpus_size, seed)]
        if isinstance(corpus, str) or not all(isinstance(t, str) for t in corpus):
            raise TypeError(tr("corpus must be a list of str (texts written without spaces)"))
        self.corpus = list(corpus)
        self.bpes = {unit: learn_bpe(self.corpus, n_merges, unit) for unit in UNITS}
        self.curves = {unit: bpe_curve(bpe, self.corpus) for unit, bpe in self.bpes.items()}
        self.sentences = [str(s) for s in sentences]
        for s in self.sentences:
            self.bpes["char"].encode(s, 0)  # a clear error for characters the corpus lacks
        self.merges = widgets.IntSlider(
            value=min(10, n_merges),
            min=0,
            max=n_merges,
            description=tr("merges"),
            continuous_update=True,
        )
        self.unit = widgets.ToggleButtons(
            options=[(tr("characters"), "char"), (tr("UTF-8 bytes"), "byte")], value="char"
        )
        self.canvas = BPECanvas(len(self.sentences), blit=True)
        super().__init__([self.merges, self.unit])
        self.redraw()

    @property
    def bpe(self):
        return self.bpes[self.unit.value]

    def tokens(self, sentence: str | None = None) -> list[str]:
        """The tokens of `sentence` (the first one by default) at the slider's merges."""
        sentence = self.sentences[0] if sentence is None else sentence
        return [token_text(t) for t in self.bpe.encode(sentence, self.merges.value)]

    def redraw(self) -> None:
        k = self.merges.value
        self.canvas.draw(self.bpe, self.sentences, k, self.curves[self.unit.value])
        self.image.value = self.canvas.png()
        latest = self.bpe.merges[max(0, k - 5) : k]
        lines = [
            markup_n(
                "merge {k}: {a} + {b} → {ab} ({n} time)",
                "merge {k}: {a} + {b} → {ab} ({n} times)",
                m.count,
                k=max(0, k - len(latest)) + i + 1,
                a=token_text(m.pair[0]),
                b=token_text(m.pair[1]),
                ab=token_text(m.token),
            )  # fmt: skip
            for i, m in enumerate(latest)
        ]
        self.show("<br>".join(lines) or markup("no merges yet: every symbol is a token"))
