"""KeyboardScope: keeps a kernel-drawn explorer's sliders under the keyboard in Notebook 7.

Notebook 7 handles its keyboard shortcuts before a widget sees the key, so the arrow keys on
a focused ipywidgets slider move the cell cursor instead of the slider (JupyterLab 4 lets the
widget go first). Lumino skips a shortcut when the element it would match, the focused
control itself, carries `data-lm-suppress-shortcuts`: this invisible widget's script
(static/keyboard_scope.js) marks each control of the explorer around it as it takes the
focus. BrowserHeatmap marks its own controls the same way.
"""

from __future__ import annotations

from pathlib import Path

import anywidget

SCRIPT = Path(__file__).with_name("static") / "keyboard_scope.js"


class KeyboardScope(anywidget.AnyWidget):
    _esm = SCRIPT.read_text(encoding="utf-8")

    def __repr__(self) -> str:
        return "KeyboardScope()"
