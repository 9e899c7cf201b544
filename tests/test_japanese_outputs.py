"""No English in what a Japanese learner sees: every stored output of the Japanese notebooks
and solutions, the text of every figure drawn while they ran, the saved widgets' labels,
options and readouts, and the comments and docstrings of their code cells
(tests/english_in_japanese.py finds it, naming the notebook, the cell and the line). Code
identifiers, units, proper names and a few kept terms are allowed; anything else is a text to
put through `tr` and translate, or a comment to write in Japanese.

It counted 470 lines at ba28875, before the notebooks' own printing went through `tr`; with
comments, docstrings, widget state and two-letter words read too, 427 at 4b57c67 (153 output
lines, 146 of them a check line's `|error|`, and 274 lines of comments and docstrings)."""

from __future__ import annotations

import nbformat
from english_in_japanese import JAPANESE, WIDGET_STATE, english_lines


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
        nbformat.v4.new_output("stream", name="stdout", text="-1e+06 in float16 -> -inf\n"),
        nbformat.v4.new_output("stream", name="stdout", text="歩    e6 ad a9\n"),  # UTF-8 bytes
    ]
    code = nbformat.v4.new_code_cell(
        'def f(ids):\n    """ids (..., n) から、行ごとの和。"""\n'
        "    return ids.sum(-1)  # the sum of each row\n\n\nx = f(ids)  # `ids`: (n,)\n"
    )
    notebook.cells = [cell, code]
    # what the figures this cell drew said, as `make notebooks` records it
    notebook.metadata["nbhelpers"] = {"figure_texts": {cell.id: ["クエリ $q_i$", "head 0"]}}
    widgets = {
        "a": {"model_name": "DropdownModel",
              "state": {"description": "クエリ", "_options_labels": ["0：犬", "the last"]}},
        "b": {"model_name": "HTMLModel", "state": {"value": "<b>o<sub>ij</sub></b> = 0.5"}},
    }  # fmt: skip
    notebook.metadata["widgets"] = {WIDGET_STATE: {"state": widgets}}
    path = tmp_path / "x.ipynb"
    nbformat.write(notebook, path)
    found = english_lines(path)
    assert [line for _, line, _ in found] == [
        "widget: the last",
        "figure: head 0",
        "step 100: 37 of 200 grammatical",
        "-1e+06 in float16 -> -inf",
        "comment: the sum of each row",
    ]
    assert [words for _, _, words in found] == [
        ["the", "last"], ["head"], ["step", "of", "grammatical"], ["in"],
        ["the", "sum", "of", "each", "row"],
    ]  # fmt: skip
