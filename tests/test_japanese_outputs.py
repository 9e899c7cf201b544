"""No English in what a Japanese learner sees: every stored output of the Japanese notebooks
and solutions, and the text of every figure drawn while they ran (tests/english_in_japanese.py
finds it, naming the notebook, the cell and the line). Code identifiers, units, proper names
and a few kept terms are allowed; anything else is a text to put through `tr` and translate.

It counted 470 lines at ba28875, before the notebooks' own printing went through `tr`."""

from __future__ import annotations

import nbformat
from english_in_japanese import JAPANESE, english_lines


def test_the_japanese_edition_shows_no_english():
    found = [(path.name, cell, line) for path in JAPANESE for cell, line, _ in english_lines(path)]
    listing = "\n".join(f"{name} [{cell}] {line[:100]}" for name, cell, line in found[:40])
    assert not found, f"{len(found)} output lines with English words:\n{listing}"


def test_the_scanner_finds_english_and_passes_japanese_and_code(tmp_path):
    notebook = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell("print(...)")
    cell.outputs = [
        nbformat.v4.new_output("stream", name="stdout", text="一致 softmax 対 F.softmax\n"),
        nbformat.v4.new_output("stream", name="stdout", text="step 100: 37 of 200 grammatical\n"),
        nbformat.v4.new_output("execute_result", data={"text/plain": "tensor([0.1, 0.9])"}),
        nbformat.v4.new_output("stream", name="stdout", text="Linear(in_features=8, bias=True)\n"),
        nbformat.v4.new_output("stream", name="stdout", text="torch: view size is not valid\n"),
    ]
    notebook.cells = [cell]
    # what the figures this cell drew said, as `make notebooks` records it
    notebook.metadata["nbhelpers"] = {"figure_texts": {cell.id: ["クエリ $q_i$", "head 0"]}}
    path = tmp_path / "x.ipynb"
    nbformat.write(notebook, path)
    found = english_lines(path)
    assert [line for _, line, _ in found] == ["figure: head 0", "step 100: 37 of 200 grammatical"]
    assert [words for _, _, words in found] == [["head"], ["step", "grammatical"]]
