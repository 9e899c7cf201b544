"""Checks that every explorer's tests make: a control's change reaches the picture."""

from __future__ import annotations

import io

import numpy as np
import PIL.Image


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
