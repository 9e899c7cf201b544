"""One redraw protocol (figures/canvas.BlitCanvas) for every canvas an explorer redraws: for
each explorer, after each move of a sequence of control changes, the frame png() paints (the
background kept, only the changing artists painted over it) is the picture a full render of
the same figure gives."""

from __future__ import annotations

import io

import ipywidgets
import numpy as np
import PIL.Image
import pytest
import torch

from explorer_checks import EXPLORERS
from nbhelpers import GPT1
from nbhelpers.corpus import JapaneseGrammar
from nbhelpers.experiments.pretraining import corpus_model_config
from nbhelpers.figures.canvas import BlitCanvas, figure_to_png


@pytest.fixture(scope="module")
def model():
    torch.manual_seed(0)
    grammar = JapaneseGrammar()
    return GPT1(corpus_model_config(grammar)).eval(), grammar


def pixels(png: bytes) -> np.ndarray:
    return np.asarray(PIL.Image.open(io.BytesIO(png)).convert("RGB")).astype(int)


def moves(explorer) -> list[tuple]:
    """Up to three values for each of the explorer's controls: its ends and back."""
    found = []
    for control in explorer._controls:
        if isinstance(control, (ipywidgets.IntSlider, ipywidgets.FloatSlider)):
            values = [control.max, control.min, control.value]
        elif hasattr(control, "options") and len(control.options) > 1:
            options = [o[1] if isinstance(o, tuple) else o for o in control.options]
            values = [options[-1], options[0], control.value]
        elif isinstance(control, ipywidgets.Checkbox):
            values = [not control.value, control.value]
        else:
            continue
        found += [(control, value) for value in values]
    return found


def full_render(canvas: BlitCanvas) -> bytes:
    """The figure rendered whole, keeping the canvas's backgrounds as they are, so that the
    next frame still paints over what the earlier frames kept (a background that went stale
    would show)."""
    blitter = canvas._layers.blitter
    blitter._rendering = True  # its forget() ignores this render
    try:
        return figure_to_png(canvas.figure)
    finally:
        blitter._rendering = False


def blitting_canvases(explorer) -> list[BlitCanvas]:
    values = [*vars(explorer).values()]
    values += [v for d in values if isinstance(d, dict) for v in d.values()]
    return [v for v in values if isinstance(v, BlitCanvas) and v.blit]


@pytest.mark.slow  # every explorer through every control: the full run (make test)
@pytest.mark.parametrize("name", sorted(EXPLORERS))
def test_a_blitted_frame_is_the_full_render_after_every_move(name, model):
    explorer = EXPLORERS[name](model)
    try:
        if not blitting_canvases(explorer):
            pytest.skip(f"{name} renders its figure whole at every redraw")
        for control, value in moves(explorer):
            control.value = value
            canvas = explorer.canvas
            blitted = pixels(canvas.png())
            full = pixels(full_render(canvas))
            assert blitted.shape == full.shape, (control.description, value)
            differ = (np.abs(blitted - full).max(axis=-1) > 64).mean()
            # the same pictures: a stale text (a label kept in the background) shows as about
            # 0.15 % of the pixels; antialiasing at an edge painted twice, 0.01 % at most
            assert differ < 0.0005, f"{name}: {control.description} = {value!r}: {differ:.3%}"
    finally:
        explorer.close()


def test_every_blitting_canvas_uses_the_one_protocol():
    """No canvas keeps a Blitter of its own: each redraws through BlitCanvas."""
    import inspect

    import nbhelpers.figures as figures

    for name in figures.__all__:
        cls = getattr(figures, name)
        if inspect.isclass(cls) and issubclass(cls, figures.Canvas):
            source = inspect.getsource(cls)
            assert "Blitter(" not in source and "set_animated" not in source, name
