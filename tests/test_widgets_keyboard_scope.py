"""KeyboardScope, headless: every kernel-drawn explorer carries one, and closing the explorer
closes it. That its script keeps the arrow keys on a focused slider in Notebook 7 is tested
in a real browser (tests/browser/test_lab_browser.py, the Notebook 7 test)."""

from __future__ import annotations

import torch

from nbhelpers.widgets.attention_matrix import AttentionMatrixExplorer
from nbhelpers.widgets.keyboard_scope import SCRIPT, KeyboardScope


def explorer():
    return AttentionMatrixExplorer(list("abc"), torch.eye(3))


def test_an_explorer_carries_one_keyboard_scope():
    scopes = [c for c in explorer().children if isinstance(c, KeyboardScope)]
    assert len(scopes) == 1


def test_closing_the_explorer_closes_its_scope():
    shown = explorer()
    scope = shown._keyboard_scope
    assert scope.comm is not None
    shown.close()
    assert scope.comm is None


def test_its_script_ships_in_the_package_and_marks_the_focused_control():
    script = SCRIPT.read_text(encoding="utf-8")
    assert KeyboardScope._esm == script
    assert "focusin" in script and "lmSuppressShortcuts" in script


def test_a_cell_is_the_same_cell_in_both_editions():
    # Without JupyterLab's cellId (nbclient, nbval), rerunning a cell is recognised by its
    # code, so that the old explorer closes; the Japanese edition's translated comments and
    # docstrings leave the code the same, and a changed line does not.
    from nbhelpers.support.cell_code import runnable_code as _code_of

    english = 'def f():\n    """Draw it."""\n    return 1  # the explorer\n\nx = f()'
    japanese = 'def f():\n    """描く。"""\n    return 1  # エクスプローラー\n\nx = f()'
    assert _code_of(english) == _code_of(japanese)
    assert _code_of(english) != _code_of(english.replace("return 1", "return 2"))
    assert _code_of("%env X=1\nx = 1") == _code_of("x = 1")
