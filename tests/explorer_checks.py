"""Checks that every explorer's tests make: a control's change reaches the picture."""

from __future__ import annotations

import io

import numpy as np
import PIL.Image
import torch

import nbhelpers.widgets as nbw
from nbhelpers import GPT1, CausalityExplorer, GPT1Config
from nbhelpers.widgets import (
    AttentionExplorer,
    AttentionMatrixExplorer,
    EmbeddingExplorer,
    MaskExplorer,
    MultiHeadExplorer,
    ScoreScalingExplorer,
    SoftmaxExplorer,
    WeightedAverageExplorer,
)


def assert_redraws(explorer, control: str, value, *, readout: bool = True) -> None:
    """Setting `explorer.<control>.value` gives new PNG bytes (and a new readout)."""
    before_png, before_text = explorer.png(), explorer.readout.value
    getattr(explorer, control).value = value
    assert explorer.png() != before_png, f"{control} = {value!r} did not redraw the image"
    if readout:
        assert explorer.readout.value != before_text, f"{control} = {value!r}: same readout"


def assert_shows_a_figure(explorer) -> None:
    """The image widget holds a PNG of a drawn figure: it decodes, has the size the widget
    declares, and is not blank."""
    data = bytes(explorer.image.value)
    image = PIL.Image.open(io.BytesIO(data))
    assert image.format == "PNG"
    assert explorer.image.width == str(image.width), "the widget's width is not the PNG's"
    pixels = np.asarray(image.convert("RGB"))
    assert len(np.unique(pixels.reshape(-1, 3), axis=0)) > 8, "the image is (nearly) blank"


TAGS = ["<SOS>", "<A>", "<PAD>", "<B>", "<EOS>"]  # tokens that look like HTML tags
# The markup the course's own readout templates use.
OUR_MARKUP = {"b", "br", "sub", "sup", "span"}


def scores(n: int) -> torch.Tensor:
    return torch.randn(n, n, generator=torch.Generator().manual_seed(0))


def tiny_gpt1() -> GPT1:
    torch.manual_seed(0)
    return GPT1(GPT1Config(vocab_size=len(TAGS), n_ctx=8, d_model=16, n_layers=1, n_heads=2))


# One of each explorer whose readout names tokens, every token one that looks like a tag.
TAG_EXPLORERS = {
    "AttentionExplorer": lambda: AttentionExplorer(TAGS),
    "AttentionMatrixExplorer": lambda: AttentionMatrixExplorer(TAGS, scores(5)),
    "MaskExplorer": lambda: MaskExplorer(TAGS, scores(5), padding=1),
    "ScoreScalingExplorer": lambda: ScoreScalingExplorer(TAGS),
    "WeightedAverageExplorer": lambda: WeightedAverageExplorer(
        TAGS, torch.randn(5, 2), torch.randn(5, 2), torch.randn(5, 2)
    ),
    "MultiHeadExplorer": lambda: MultiHeadExplorer(TAGS, torch.randn(5, 8)),
    "SoftmaxExplorer": lambda: SoftmaxExplorer([2.0, 1.0, 0.5, 0.0, -1.0], TAGS),
    "EmbeddingExplorer": lambda: EmbeddingExplorer(TAGS, ["<SOS>", "<A>", "<SOS>"]),
    "CausalityExplorer": lambda: CausalityExplorer(tiny_gpt1(), TAGS, TAGS),
}


# One of each explorer, as a notebook makes it; `model` is (an untrained GPT1 of the course
# grammar, the grammar) for those that need one.
EXPLORERS = {
    "AttentionExplorer": lambda model: nbw.AttentionExplorer(),
    "AttentionMatrixExplorer": lambda model: nbw.AttentionMatrixExplorer(SENTENCE, _randn(5, 5)),
    "AttentionMemoryExplorer": lambda model: nbw.AttentionMemoryExplorer(),
    "CausalityExplorer": lambda model: nbw.CausalityExplorer(
        model[0], model[1].tokenizer.tokens, SENTENCE
    ),
    "DotProductGeometryExplorer": lambda model: nbw.DotProductGeometryExplorer(),
    "EmbeddingExplorer": lambda model: nbw.EmbeddingExplorer(),
    "MaskExplorer": lambda model: nbw.MaskExplorer(SENTENCE, _randn(5, 5)),
    "MultiHeadExplorer": lambda model: nbw.MultiHeadExplorer(SENTENCE, _randn(5, 8)),
    "NextTokenExplorer": lambda model: nbw.NextTokenExplorer(*model),
    "ScoreScalingExplorer": lambda model: nbw.ScoreScalingExplorer(),
    "SoftmaxExplorer": lambda model: nbw.SoftmaxExplorer(),
    "WeightedAverageExplorer": lambda model: nbw.WeightedAverageExplorer.demo(),
    "BPEExplorer": lambda model: nbw.BPEExplorer(n_merges=20, corpus_size=200),
    "TaskInputExplorer": lambda model: nbw.TaskInputExplorer(),
    "FineTuningCurvesExplorer": lambda model: nbw.FineTuningCurvesExplorer(),
    "ConvergenceExplorer": lambda model: nbw.ConvergenceExplorer(),
}


SENTENCE = ["犬", "が", "河岸", "を", "歩く"]


def _randn(*shape: int) -> torch.Tensor:
    return torch.randn(*shape, generator=torch.Generator().manual_seed(0))
