"""The README's map of where each notebook's parts live ("Where each part lives") is checked
against the notebooks themselves: every nbhelpers module a notebook imports from (its
formulas, experiments, figures, explorers and exercise checkers) is in that notebook's row,
and every file the table names exists."""

from __future__ import annotations

import ast
import importlib
import re

import nbformat
import pytest

from notebook_tools import NOTEBOOKS, ROOT

PACKAGE = ROOT / "nbhelpers"
# the table's columns after the notebook's number, and the folder each names files in
COLUMNS = ("", "experiments/", "figures/", "widgets/", "exercises/")
# in every notebook, so not in the map: the support layer (language, checks, device, seeding)
# and show_figure (figures/canvas.py)
SUPPORT = ("nbhelpers.support", "nbhelpers.figures.canvas")


def readme_rows() -> dict[str, list[set[str]]]:
    """{notebook number: one set of module paths per column}, from the README's table."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text[text.index("### Where each part lives") :]
    rows = {}
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 6 or not re.fullmatch(r"\d\d", cells[0]):
            continue
        rows[cells[0]] = [
            {folder + name for name in re.findall(r"`([\w/]+\.py)`", cell)}
            for folder, cell in zip(COLUMNS, cells[1:], strict=True)
        ]
    return rows


def imported_modules(path) -> set[str]:
    """The nbhelpers modules (as paths under nbhelpers/) that define what a notebook imports."""
    found = set()
    for cell in nbformat.read(path, as_version=4).cells:
        if cell.cell_type != "code":
            continue
        source = "\n".join(
            "" if line.lstrip().startswith(("%", "!")) else line
            for line in cell.source.splitlines()
        )
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("nbhelpers"):
                module = importlib.import_module(node.module)
                for alias in node.names:
                    defined = getattr(getattr(module, alias.name), "__module__", node.module)
                    found.add(defined)
    return {
        name.removeprefix("nbhelpers.").replace(".", "/") + ".py"
        for name in found
        if name.startswith("nbhelpers.") and not name.startswith(SUPPORT)
    }


ROWS = readme_rows()


def test_the_table_has_a_row_for_every_notebook_and_names_files_that_exist():
    assert sorted(ROWS) == [p.name[:2] for p in NOTEBOOKS]
    missing = sorted(
        f"{number}: {module}"
        for number, columns in ROWS.items()
        for column in columns
        for module in column
        if not (PACKAGE / module).exists()
    )
    assert not missing, f"the README's map names files that do not exist: {missing}"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_every_module_a_notebook_imports_is_in_its_row(path):
    listed = set().union(*ROWS[path.name[:2]])
    unlisted = sorted(imported_modules(path) - listed)
    assert not unlisted, (
        f"{path.name} imports from {unlisted}, which the README's map (Where each part lives) "
        "does not list in its row"
    )
