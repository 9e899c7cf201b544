"""The training progress line: stored as it ended in a notebook, silent elsewhere."""

import nbformat
import pytest
from nbclient import NotebookClient

from nbhelpers.support.progress import ProgressLine


def test_outside_a_kernel_it_shows_nothing_and_never_fails(capsys):
    line = ProgressLine("training", 3)
    line.update(2)
    assert capsys.readouterr().out == ""


@pytest.mark.slow
def test_a_notebook_stores_the_last_state_only():
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [
        nbformat.v4.new_code_cell(
            "from nbhelpers.support.progress import ProgressLine\n"
            "line = ProgressLine('training', 3)\n"
            "for step in (1, 2, 3):\n    line.update(step)"
        )
    ]
    NotebookClient(notebook, kernel_name="python3", timeout=60, coalesce_streams=True).execute()
    (output,) = notebook.cells[0].outputs
    assert output["name"] == "stdout" and output["text"] == "training: step 3 of 3\n"
