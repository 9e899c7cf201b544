"""Interactive explorers: ipywidgets controls around a pure figure, shown as PNG bytes.

Every explorer follows one pattern: controls -> a pure computation -> a HeatmapCanvas (or
another Figure builder) -> PNG bytes in an ipywidgets.Image. Nothing is drawn through
pyplot or into an Output widget, so redraws do not flicker and nothing leaks into the
notebook's stored outputs. Reprs are short and stable so nbval can compare them.
"""

from __future__ import annotations

from collections.abc import Sequence

import ipywidgets as widgets


class FigureExplorer(widgets.VBox):
    """Base class: a column of controls above an image that `redraw()` refreshes."""

    def __init__(self, controls: Sequence[widgets.Widget], *, readout: bool = True):
        self.image = widgets.Image(format="png", layout=widgets.Layout(width="auto"))
        self.readout = widgets.HTML()
        children = [widgets.HBox(list(controls)), self.image]
        if readout:
            children.append(self.readout)
        super().__init__(children)
        for control in controls:
            if hasattr(control, "value"):
                control.observe(self._on_change, names="value")

    def _on_change(self, _change) -> None:
        self.redraw()

    def redraw(self) -> None:
        raise NotImplementedError  # each explorer says what it draws

    def png(self) -> bytes:
        """The image currently shown (bytes; Image.value is a memoryview in ipywidgets 8)."""
        return bytes(self.image.value)

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"
