"""Every figure a notebook draws reaches the page: no cell shows a figure's repr
("<Figure size 640x480 with 1 Axes>") instead of the picture, and no show_figure(...) call
is dropped by standing, undisplayed, before the cell's last statement."""

from __future__ import annotations

import ast
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parent.parent
FOLDERS = ("notebooks", "notebooks/ja", "solutions", "solutions/ja")
NOTEBOOKS = sorted(path for folder in FOLDERS for path in (ROOT / folder).glob("*.ipynb"))


def dropped_figures(source: str) -> list[int]:
    """Line numbers of bare show_figure(...) statements that are not the cell's last."""
    code = "\n".join("pass" if line.lstrip().startswith(("%", "!")) else line
                     for line in source.splitlines())  # fmt: skip
    body = ast.parse(code).body
    return [
        statement.lineno
        for statement in body[:-1]
        if isinstance(statement, ast.Expr)
        and isinstance(statement.value, ast.Call)
        and getattr(statement.value.func, "id", None) == "show_figure"
    ]


def test_a_bare_show_figure_before_the_last_line_is_found():
    assert dropped_figures("show_figure(a)\nprint(1)") == [1]
    assert dropped_figures("display(show_figure(a))\nprint(1)") == []
    assert dropped_figures("x = 1\nshow_figure(a)") == []


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_figure_reaches_the_page(path):
    notebook = nbformat.read(path, as_version=4)
    found = []
    for index, cell in enumerate(notebook.cells):
        if cell.cell_type != "code":
            continue
        found += [f"cell {index}, line {n}: show_figure(...) is neither displayed nor last"
                  for n in dropped_figures(cell.source)]  # fmt: skip
        for output in cell.get("outputs", []):
            text = "".join(output.get("data", {}).get("text/plain", ""))
            if text.startswith("<Figure size") and "image/png" not in output.get("data", {}):
                found.append(f"cell {index}: shows {text!r} instead of the picture")
    assert not found, f"{path.relative_to(ROOT)}:\n" + "\n".join(found)
