"""The Japanese notebooks match the English ones: the same code, and every markdown cell a
translation of the English cell as it is now (scripts/translations.py keeps the hashes)."""

from __future__ import annotations

import importlib.util
import shutil
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("translations", ROOT / "scripts/translations.py")
translations = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(translations)


@pytest.mark.parametrize(
    "english", translations.english_notebooks(), ids=lambda p: f"{p.parent.name}/{p.name}"
)
def test_the_japanese_edition_is_up_to_date(english):
    found = translations.problems(english)
    assert not found, "\n".join(
        [*found, "then re-translate and `python scripts/translations.py stamp ...`"]
    )


@pytest.fixture
def pair(tmp_path):
    """A copy of one English notebook and its Japanese edition, in a scratch folder."""
    english = ROOT / "notebooks" / "02_softmax.ipynb"
    (tmp_path / "ja").mkdir()
    shutil.copy(english, tmp_path / english.name)
    shutil.copy(translations.japanese_path(english), tmp_path / "ja" / english.name)
    return tmp_path / english.name


def _edit(path: Path, index_of, change) -> str:
    notebook = nbformat.read(path, as_version=4)
    cell = next(c for c in notebook.cells if index_of(c))
    change(cell)
    nbformat.write(notebook, path)
    return cell.get("id")


def test_a_changed_english_cell_is_named(pair):
    assert translations.problems(pair) == []
    cell_id = _edit(
        pair, lambda c: c.cell_type == "markdown", lambda c: c.update(source=c.source + " More.")
    )
    found = translations.problems(pair)
    assert len(found) == 1
    assert f"cell {cell_id}" in found[0] and "the English changed" in found[0]
    assert pair.name in found[0]


def test_changed_code_is_named(pair):
    cell_id = _edit(pair, lambda c: c.cell_type == "code", lambda c: c.update(source="x = 1"))
    found = translations.problems(pair)
    assert len(found) == 1 and f"cell {cell_id}" in found[0] and "code differs" in found[0]


def test_sync_keeps_translations_and_marks_new_cells(pair):
    notebook = nbformat.read(pair, as_version=4)
    notebook.cells.insert(1, nbformat.v4.new_markdown_cell("A brand new paragraph here."))
    nbformat.write(notebook, pair)
    translations.sync(pair)
    found = translations.problems(pair)
    assert len(found) == 1 and "not translated yet" in found[0]
    # what the Japanese run recorded (figure texts, widget state) stays until it runs again
    kept = nbformat.read(translations.japanese_path(pair), as_version=4).metadata
    assert kept["nbhelpers"]["figure_texts"] and kept["widgets"]


def _set_last_code(path: Path, source: str) -> str:
    notebook = nbformat.read(path, as_version=4)
    cell = [c for c in notebook.cells if c.cell_type == "code"][-1]
    cell.source = source
    nbformat.write(notebook, path)
    return cell.get("id")


def test_a_japanese_cell_may_change_its_words_but_not_its_code(pair):
    japanese = translations.japanese_path(pair)
    cell_id = _set_last_code(
        pair,
        'def f(x):\n    """x -> x + 1."""\n    print(f"x is {x:.2f}")  # add one\n    return x + 1',
    )
    translations.sync(pair)
    found = translations.problems(pair)
    assert len(found) == 1 and "not translated yet" in found[0]
    translated = (
        'def f(x):\n    """x に 1 を足す。"""\n'
        '    print(f"x は {x:.2f}")  # 1 を足す\n    return x + 1'
    )
    _set_last_code(japanese, translated)
    translations.stamp(japanese, [cell_id])
    assert translations.problems(pair) == []  # literals, comments, docstrings: its own words
    translations.sync(pair)  # a later sync keeps the translated words
    kept = next(c for c in nbformat.read(japanese, 4).cells if c.get("id") == cell_id)
    assert "1 を足す" in kept.source and "x は" in kept.source
    # what runs inside an f-string is code: a different expression is named, line beside line
    _set_last_code(japanese, translated.replace("{x:.2f}", "{x + 1:.2f}"))
    (found,) = translations.problems(pair)
    assert "code differs" in found and f"cell {cell_id}" in found
    assert 'en: print(f"x is {x:.2f}")' in found and 'ja: print(f"x は {x + 1:.2f}")' in found
    # a stamp is refused for code that differs
    with pytest.raises(SystemExit, match="code differs"):
        translations.stamp(japanese, [cell_id])


def test_a_changed_english_literal_makes_the_japanese_cell_stale(pair):
    notebook = nbformat.read(pair, as_version=4)
    cell = next(c for c in notebook.cells if c.cell_type == "code" and '"' in c.source)
    cell.source = cell.source.replace('"', '"new words, ', 1)
    nbformat.write(notebook, pair)
    (found,) = translations.problems(pair)
    assert f"cell {cell.get('id')}" in found and "the English changed" in found
