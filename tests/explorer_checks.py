"""Checks that every explorer's tests make: a control's change reaches the picture."""

from __future__ import annotations


def assert_redraws(explorer, control: str, value, *, readout: bool = True) -> None:
    """Setting `explorer.<control>.value` gives new PNG bytes (and a new readout)."""
    before_png, before_text = explorer.png(), explorer.readout.value
    getattr(explorer, control).value = value
    assert explorer.png() != before_png, f"{control} = {value!r} did not redraw the image"
    if readout:
        assert explorer.readout.value != before_text, f"{control} = {value!r}: same readout"
