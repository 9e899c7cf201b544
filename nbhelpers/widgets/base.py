"""Interactive explorers: ipywidgets controls around a pure figure, shown as PNG bytes.

Every explorer follows one pattern: controls -> a pure computation -> a HeatmapCanvas (or
another Figure builder) -> PNG bytes in an ipywidgets.Image. Nothing is drawn through
pyplot or into an Output widget, so redraws do not flicker and nothing leaks into the
notebook's stored outputs. Reprs are short and stable so nbval can compare them.
"""

from __future__ import annotations

from collections.abc import Sequence

import ipywidgets as widgets
import torch

from ..support.cell_code import runnable_code
from ..support.language import tr
from .keyboard_scope import KeyboardScope


def token_scores(tokens: Sequence[str], scores) -> tuple[list[str], torch.Tensor]:
    """An explorer's sentence: its tokens as strings and their (n, n) scores, on the CPU."""
    tokens = [str(t) for t in tokens]
    n = len(tokens)
    if n < 1:
        raise ValueError(tr("tokens must hold at least one token"))
    scores = torch.as_tensor(scores, dtype=torch.float32).detach().cpu()
    if scores.shape != (n, n):
        raise ValueError(
            tr(
                "scores must be ({n}, {n}) for {n} tokens, got {scores_shape}",
                n=n,
                scores_shape=tuple(scores.shape),
            )
        )
    return tokens, scores


def temperature_slider(
    value: float, *, low: float, high: float = 5.0, step: float = 0.1
) -> widgets.FloatSlider:
    """The temperature T of softmax(s / T), as every explorer that has one offers it."""
    digits = len(f"{step:g}".split(".")[1]) if "." in f"{step:g}" else 0
    return widgets.FloatSlider(
        value=value,
        min=low,
        max=high,
        step=step,
        description=tr("temperature"),
        continuous_update=True,
        readout_format=f".{digits}f",
    )


# The explorer each notebook cell created last, so that rerunning the cell closes the old one.
_live_explorers: dict[tuple[str, str], FigureExplorer] = {}


def _current_cell() -> str | None:
    """An id of the cell being executed: JupyterLab's cellId, else the cell's code."""
    try:
        from IPython import get_ipython

        shell = get_ipython()
        parent = shell.get_parent() if hasattr(shell, "get_parent") else None
    except Exception:  # not in a kernel (plain Python, tests)
        return None
    if not parent:
        return None
    cell_id = (parent.get("metadata") or {}).get("cellId")
    code = parent.get("content", {}).get("code") or ""
    return cell_id or runnable_code(code) or code  # the same code in both editions


class FigureExplorer(widgets.VBox):
    """Base class: a column of controls above an image that `redraw()` refreshes.

    Rerunning the cell that made an explorer closes the previous one: its comm goes away and
    its observers stop, so stale widgets neither pile up in the kernel nor keep redrawing.
    """

    def __init__(self, controls: Sequence[widgets.Widget], *, readout: bool = True):
        # Shown at its natural size (scaling a PNG up blurs it), shrunk only to fit the cell.
        self.image = widgets.Image(format="png", layout=widgets.Layout(max_width="100%"))
        self.readout = widgets.HTML()
        self._controls = [c for c in controls if hasattr(c, "value")]
        for control in controls:
            if hasattr(control, "style") and hasattr(control.style, "description_width"):
                control.style.description_width = "initial"  # never truncate a label
        self._control_box = widgets.HBox(list(controls))
        # invisible: lets the arrow keys reach the sliders in Notebook 7 (keyboard_scope.py)
        self._keyboard_scope = KeyboardScope()
        children = [self._control_box, self.image]
        if readout:
            children.append(self.readout)
        super().__init__([*children, self._keyboard_scope])
        for control in self._controls:
            control.observe(self._on_change, names="value")
        self.image.observe(self._fit_image, names="value")
        cell = _current_cell()
        if cell is not None:
            key = (type(self).__qualname__, cell)
            previous = _live_explorers.get(key)
            if previous is not None:
                previous.close()
            _live_explorers[key] = self

    def close(self) -> None:
        # Also called by Widget.__del__ (after an explicit close, or on an explorer whose
        # __init__ raised early), so it must be safe to call more than once.
        if getattr(self, "_closed", False):
            return
        self._closed = True
        for control in getattr(self, "_controls", ()):
            control.unobserve(self._on_change, names="value")
        box = getattr(self, "_control_box", None)
        parts = (
            (*box.children, box, self.image, self.readout, self._keyboard_scope)
            if box is not None
            else ()
        )
        for part in parts:
            part.close()
        super().close()

    def _fit_image(self, change) -> None:
        # A PNG's width sits in its header (bytes 16-20); showing the image at that width keeps
        # JupyterLab from stretching it to the cell's width and blurring it.
        header = bytes(change["new"][:24])
        if header.startswith(b"\x89PNG"):
            self.image.width = str(int.from_bytes(header[16:20], "big"))

    def show(self, *parts: str) -> None:
        """Set the readout: parts made by readout.markup (values escaped), joined."""
        self.readout.value = "".join(parts)

    def _on_change(self, _change) -> None:
        self.redraw()

    def redraw(self) -> None:
        raise NotImplementedError  # each explorer says what it draws

    def png(self) -> bytes:
        """The image currently shown (bytes; Image.value is a memoryview in ipywidgets 8)."""
        return bytes(self.image.value)

    def _repr_mimebundle_(self, **kwargs):
        # Beside the live widget, the figure as it is now: a notebook viewed without a kernel
        # (GitHub, nbviewer) shows this PNG where it cannot render the widget. JupyterLab
        # shows the widget and ignores it; nbval does not compare PNGs.
        bundle = super()._repr_mimebundle_(**kwargs)
        if bundle is not None and self.image.value:
            bundle = {**bundle, "image/png": self.png()}
        return bundle

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"
