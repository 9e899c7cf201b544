"""Token sequences drawn as rows of boxes: BPE's segmentation of a sentence as the merges go
on (notebook 06), and the sequences a fine-tuning task becomes (notebook 11)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from matplotlib.figure import Figure
from matplotlib.patches import FancyBboxPatch

from ..corpus.tasks import CHOICES
from ..support.language import tr
from .bands import band, seeds_entry
from .bars import SERIES_COLOURS
from .canvas import BlitCanvas, Canvas
from .sprite_text import SpriteTexts
from .style import MID_GREY, PALE_GREY, course_font


def name_of(key: str) -> str:
    """A task's or a starting point's name, as the experiments store it, in the current
    language."""
    names = {
        "pre-trained": tr("pre-trained"),
        "embeddings only": tr("embeddings only"),
        "no pre-training": tr("no pre-training"),
        "grammaticality": tr("grammaticality"),
        "entailment": tr("entailment"),
        "classification": tr("classification"),
        "similarity": tr("similarity"),
        "multiple choice": tr("multiple choice"),
    }
    return names.get(key, key)


SPECIAL_COLOURS = {"<SOS>": "#9a9a9a", "<DELIM>": SERIES_COLOURS[1], "<EXTRACT>": SERIES_COLOURS[3]}
_BOX_HEIGHT = 0.62
TOKEN_PT = 11  # a token's text in its box


def token_text(token) -> str:
    """A token as text: a `bytes` token that is whole UTF-8 shows as its characters, one that
    splits a character shows its bytes in hex (e7 8a)."""
    if isinstance(token, bytes):
        try:
            return token.decode("utf-8")
        except UnicodeDecodeError:
            return token.hex(" ")
    return str(token)


def _width(text: str) -> float:
    # a CJK character is about as wide as two Latin ones at the same size
    return max(0.9, 0.16 + sum(0.4 if ord(c) > 0x2E80 else 0.2 for c in text))


# The widest a line of token boxes may be, in _width units, before it wraps: the BPE panel
# keeps a CJK character's box at about 0.3 inch, wide enough for it or for two hex digits.
LINE_UNITS = 20.0


def wrap_tokens(tokens: Sequence, units: float = LINE_UNITS) -> list[list]:
    """The tokens in lines of at most `units` (_width) each; a token wider than a line gets
    a line of its own."""
    lines, width = [[]], 0.0
    for token in tokens:
        w = _width(token_text(token))
        if lines[-1] and width + w > units:
            lines.append([])
            width = 0.0
        lines[-1].append(token)
        width += w
    return lines


def _draw_row(
    ax, tokens: Sequence, y: float, *, colours=None, plain=None, words: bool = True
) -> list:
    """One row of token boxes at height y, each with its token's text as a Text artist
    (`words=False`: the boxes only, for a caller that paints the texts itself); returns the
    artists it added. A token not in `colours` takes `plain`, or alternates two colours
    where no colour is given, so that BPE's token boundaries show."""
    x, drawn = 0.0, []
    for k, token in enumerate(tokens):
        text = token_text(token)
        w = _width(text)
        colour = (colours or {}).get(
            text, plain or (SERIES_COLOURS[0] if k % 2 == 0 else SERIES_COLOURS[2])
        )
        box = FancyBboxPatch(
            (x + 0.04, y - _BOX_HEIGHT / 2),
            w - 0.08,
            _BOX_HEIGHT,
            boxstyle="round,pad=0,rounding_size=0.08",
            facecolor=colour,
            alpha=0.25,
            edgecolor=colour,
        )
        drawn.append(ax.add_patch(box))
        if words:
            drawn.append(ax.text(x + w / 2, y, text, ha="center", va="center", fontsize=TOKEN_PT))
        x += w
    return drawn


class TokenRowsCanvas(Canvas):
    """One row of token boxes per sequence, with a label on its left; <SOS>, <DELIM> and
    <EXTRACT> in their own colours. One figure, redrawn for each new set of rows (it takes
    their size); the tokens' words are cached bitmaps (SpriteTexts), so a redraw costs
    little more than the boxes."""

    def __init__(self):
        super().__init__(figsize=(6.0, 1.5))
        self.ax = self.figure.add_axes((0.01, 0.02, 0.98, 0.9))
        self.ax.axis("off")
        self.words = SpriteTexts(self.ax, TOKEN_PT)
        self._drawn: list = []

    def draw(
        self, rows: Sequence[Sequence], labels: Sequence[str], *, title: str | None = None
    ) -> Figure:
        if not rows or len(rows) != len(labels):
            raise ValueError(
                tr(
                    "rows and labels must be non-empty and as many, got {len_rows} and "
                    "{len_labels}",
                    len_rows=len(rows),
                    len_labels=len(labels),
                )
            )
        for artist in self._drawn:
            artist.remove()
        widths = [sum(_width(token_text(t)) for t in row) for row in rows]
        label_width = max(_width(label) for label in labels) * 0.75 + 0.3
        total = label_width + max(widths)
        height = 0.62 * len(rows) + 0.9
        self.figure.set_size_inches(min(13.5, 0.62 * total + 0.6), height)
        ax = self.ax
        ax.set_position((0.01, 0.02, 0.98, 0.96 - 0.45 / height))
        ax.set_xlim(-label_width, max(widths) + 0.1)
        ax.set_ylim(len(rows) - 0.4, -0.6)
        self._drawn, positions, words = [], [], []
        for r, (row, label) in enumerate(zip(rows, labels, strict=True)):
            self._drawn.append(ax.text(-0.15, r, label, ha="right", va="center",
                                       fontsize=10, color="#444444"))  # fmt: skip
            boxes = _draw_row(
                ax, row, r, colours=SPECIAL_COLOURS, plain=SERIES_COLOURS[2], words=False
            )
            self._drawn += boxes
            positions += [(b.get_x() + b.get_width() / 2, r) for b in boxes]
            words += [token_text(t) for t in row]
        self.words.set_texts(positions, words)
        self.figure.suptitle(title if title else "", fontsize=11)
        return self.figure


@course_font
def token_rows_figure(
    rows: Sequence[Sequence], labels: Sequence[str], *, title: str | None = None
) -> Figure:
    """A new Figure of TokenRowsCanvas: one row of token boxes per sequence."""
    return TokenRowsCanvas().draw(rows, labels, title=title)


def bpe_curve(bpe, corpus: Sequence[str], points: int = 25) -> tuple[np.ndarray, list[float]]:
    """(merge counts, mean tokens per sentence) over the first 200 texts of `corpus`: the
    right-hand curve of bpe_figure, computed once per BPE by an explorer."""
    steps = np.unique(np.linspace(0, len(bpe.merges), points).round().astype(int))
    sample = list(corpus)[:200]
    return steps, [float(np.mean([len(bpe.encode(t, int(k))) for t in sample])) for k in steps]


class BPECanvas(BlitCanvas):
    """Left: the sentences' tokens after the first n_merges merges of a BPE. Right: the mean
    number of tokens per corpus sentence against the number of merges, this one marked.

    The right-hand panel and the title are made once per BPE; a draw replaces the token boxes
    and moves the marker. With `blit=True` (for the explorer) `png()` renders the curve, its
    ticks and labels once per BPE and then only paints the boxes, the left title and the
    marker over them; with `blit=False` every artist is an ordinary one.
    """

    def __init__(self, rows: int, *, blit: bool = False):
        super().__init__(figsize=_bpe_figsize(rows), blit=blit)
        self._lines = rows  # lines of token boxes the figure is sized for
        self.tokens_ax = self.figure.add_axes((0.02, 0.08, 0.56, 0.72))
        self.tokens_ax.axis("off")
        self.curve_ax = self.figure.add_axes((0.66, 0.2, 0.32, 0.62))
        self._shows: tuple | None = None  # (the BPE's unit, its curve) the panel shows
        self._curve_artists: list = []
        self._boxes: list = []
        self._marker = None

    def draw(self, bpe, sentences: Sequence[str], n_merges: int, curve) -> Figure:
        """`curve`: bpe_curve(bpe, corpus), the right-hand panel's (merges, tokens)."""
        steps, mean_tokens = curve
        rows = [bpe.encode(s, n_merges) for s in sentences]
        # Long rows (few merges, UTF-8 bytes) wrap rather than shrink their boxes past reading;
        # a sentence's lines sit closer together than two sentences.
        lines, heights, y = [], [], 0.0
        for row in rows:
            for line in wrap_tokens(row):
                lines.append(line)
                heights.append(y)
                y += 0.8
            y += 0.4
        if len(lines) != self._lines:
            self.figure.set_size_inches(_bpe_figsize(len(lines)))
            self._lines = len(lines)
        shown = (bpe.unit, tuple(steps), tuple(mean_tokens))
        if shown != self._shows:
            self._draw_curve(bpe.unit, steps, mean_tokens)
            self._shows = shown
        ax = self.tokens_ax
        for artist in self._boxes:
            artist.remove()
        widths = [sum(_width(token_text(t)) for t in line) for line in lines]
        ax.set_xlim(0, max(max(widths), 8.0) + 0.1)  # the panel has no axis: nothing to redraw
        ax.set_ylim(heights[-1] + 0.6, -0.6)
        self._boxes = [
            artist
            for line, height in zip(lines, heights, strict=True)
            for artist in _draw_row(ax, line, height)
        ]
        title = ax.set_title(
            tr("{k} merges: {tokens} tokens in the first sentence", k=n_merges,
               tokens=len(rows[0])),
            fontsize=11,
        )  # fmt: skip
        self._marker.set_xdata([n_merges, n_merges])
        self.painted(*self._boxes, title, self._marker)
        return self.figure

    def _draw_curve(self, unit: str, steps, mean_tokens) -> None:
        for artist in self._curve_artists:
            artist.remove()
        ax = self.curve_ax
        (line,) = ax.plot(steps, mean_tokens, color=SERIES_COLOURS[0])
        self._marker = ax.axvline(0, color=SERIES_COLOURS[3], lw=1.2)
        self._curve_artists = [line, self._marker]
        ax.relim()
        ax.autoscale_view()
        ax.set_xlabel(tr("merges"), fontsize=10)
        ax.set_ylabel(tr("tokens per sentence"), fontsize=10)
        ax.tick_params(labelsize=9)
        name = tr("characters") if unit == "char" else tr("UTF-8 bytes")
        self.figure.suptitle(tr("BPE from {unit}", unit=name), fontsize=12)

    def shows(self):
        return (self._shows, self._lines)


def _bpe_figsize(lines: int) -> tuple[float, float]:
    return (11.5, 0.5 * lines + 2.0)


@course_font
def bpe_figure(
    bpe, sentences: Sequence[str], n_merges: int, corpus: Sequence[str], *, curve=None
) -> Figure:
    """A new Figure of BPECanvas: the sentences' tokens after n_merges merges of `bpe`, and
    the tokens per sentence of `corpus` against the merges (`curve`: bpe_curve's result,
    when the caller has it already)."""
    curve = curve if curve is not None else bpe_curve(bpe, corpus)
    return BPECanvas(len(sentences)).draw(bpe, sentences, n_merges, curve)


# The curves GPT-1 compared: (starting point, λ or None for the chosen one, colour, line style).
CURVE_SERIES = (
    ("pre-trained", None, SERIES_COLOURS[0], "-"),
    ("pre-trained", 0.0, SERIES_COLOURS[1], "--"),
    ("embeddings only", 0.5, SERIES_COLOURS[2], ":"),
    ("no pre-training", 0.5, SERIES_COLOURS[3], "-."),
)


class FineTuningCurvesCanvas(BlitCanvas):
    """Accuracy against the number of labelled examples (log scale): the mean over seeds as a
    line and the lowest to highest seed as a band, for the pre-trained model with the chosen
    λ and the comparisons GPT-1 made (λ = 0, the embeddings only, no pre-training).

    The axes, their ticks and labels are made once; a draw replaces the curves, the legend and
    the title and moves the marker of the labelled-set size. With `blit=True` (for the
    explorer) `png()` renders the axes once and paints only those over them.
    """

    def __init__(self, *, blit: bool = False):
        super().__init__(figsize=(7.6, 4.3), blit=blit)
        self.ax = self.figure.add_axes((0.1, 0.13, 0.52, 0.77))
        self._drawn: list = []
        self._ticks: tuple | None = None
        ax = self.ax
        self._chance = ax.axhline(0.5, color=PALE_GREY, lw=0.8)  # moved to each task's chance
        ax.set_xscale("log", base=2)
        ax.set_ylim(0.2, 1.0)
        ax.set_xlabel(tr("labelled examples"), fontsize=10)
        ax.set_ylabel(tr("test accuracy"), fontsize=10)
        ax.tick_params(labelsize=9)
        self._marker = None  # the labelled-set size, made once the limits are fixed

    def draw(
        self, runs: Sequence[dict], task: str, lam: float, n_labelled: int | None = None
    ) -> Figure:
        ax = self.ax
        for artist in self._drawn:
            artist.remove()
        self._drawn = []
        drawn = set()
        for start, lam_k, colour, style in CURVE_SERIES:
            lam_k = lam if lam_k is None else lam_k
            if (start, lam_k) in drawn:
                continue
            drawn.add((start, lam_k))
            chosen = [
                r for r in runs if r["task"] == task and r["start"] == start and r["lam"] == lam_k
            ]
            sizes = sorted({r["n_labelled"] for r in chosen})
            if not sizes:
                continue
            by_size = [[r["accuracy"] for r in chosen if r["n_labelled"] == n] for n in sizes]
            label = tr("{start}, λ = {lam:g}", start=name_of(start), lam=lam_k)
            self._drawn += band(ax, sizes, by_size, colour, style, "o", label)
        ticks = tuple(sorted({r["n_labelled"] for r in runs}))
        if ticks != self._ticks:
            ax.set_xticks(ticks, [str(n) for n in ticks])
            ax.minorticks_off()
            # the limits the first curves give, kept: later curves span the same sizes
            ax.set_xlim(*ax.get_xlim())
            self._ticks = ticks
        if self._marker is None:
            self._marker = ax.axvline(ticks[0], color=MID_GREY, lw=1.0)
        self._marker.set_visible(n_labelled is not None)
        if n_labelled is not None:
            self._marker.set_xdata([n_labelled, n_labelled])
        ax.set_title(tr("task: {task}", task=name_of(task)), fontsize=11)
        seeds = len({r["seed"] for r in runs if r["task"] == task})
        handles = [*ax.get_legend_handles_labels()[0], seeds_entry(seeds)]
        legend = ax.legend(handles=handles, fontsize=9, loc="upper left",
                           bbox_to_anchor=(1.02, 1.0), frameon=False)  # fmt: skip
        chance = 1 / CHOICES if task == "multiple choice" else 0.5
        self._chance.set_ydata([chance, chance])
        self.painted(*self._drawn, self._chance, self._marker, ax.title, legend)
        return self.figure

    def shows(self):
        return (self._ticks, self.ax.get_xlim())


@course_font
def fine_tuning_curves_figure(
    runs: Sequence[dict], task: str, lam: float, n_labelled: int | None = None
) -> Figure:
    """A new Figure of FineTuningCurvesCanvas: accuracy against labelled examples for `task`,
    the pre-trained model with λ = `lam` beside GPT-1's comparisons, `n_labelled` marked."""
    return FineTuningCurvesCanvas().draw(runs, task, lam, n_labelled)
