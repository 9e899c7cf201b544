"""Every notebook, run twice in one kernel with the network blocked.

Learners rerun cells all the time: the second pass must raise nothing, print the same checked
outputs, and leave no stale widgets alive. Blocking socket connections proves the course
needs no network at run time.
"""

from __future__ import annotations

import copy

import nbformat
import pytest
from nbclient import NotebookClient

from notebook_tools import NOTEBOOKS, ROOT, compared_text, ignores_output, sanitize_patterns

BLOCK_NETWORK = """\
import socket as _socket

def _refuse(*args, **kwargs):
    raise OSError("network access is blocked in this test")

_socket.socket.connect = _refuse
_socket.socket.connect_ex = _refuse
_socket.create_connection = _refuse
try:
    _socket.create_connection(("127.0.0.1", 9))
    raise AssertionError("the network block does not work")
except OSError as error:
    assert "blocked" in str(error)
"""

COUNT_OPEN_EXPLORERS = """\
from ipywidgets.widgets.widget import _instances
from nbhelpers.widgets.base import FigureExplorer
print(sum(isinstance(w, FigureExplorer) and w.comm is not None for w in _instances.values()))
"""


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_rerun_in_same_kernel_offline(path, monkeypatch):
    monkeypatch.setenv("NBHELPERS_DEVICE", "cpu")
    monkeypatch.setenv("PYTHONHASHSEED", "0")
    notebook = nbformat.read(path, as_version=4)
    code = [c for c in notebook.cells if c.cell_type == "code"]
    for cell in code:
        cell.outputs = []
    first, second = code, [copy.deepcopy(c) for c in code]
    count_after_first = nbformat.v4.new_code_cell(COUNT_OPEN_EXPLORERS)
    count_after_second = nbformat.v4.new_code_cell(COUNT_OPEN_EXPLORERS)
    notebook.cells = [
        nbformat.v4.new_code_cell(BLOCK_NETWORK),
        *first,
        count_after_first,
        *second,
        count_after_second,
    ]
    client = NotebookClient(
        notebook,
        kernel_name="python3",
        timeout=600,
        resources={"metadata": {"path": str(ROOT / "notebooks")}},
    )
    client.execute()  # raises CellExecutionError on the first error, in either pass

    patterns = sanitize_patterns()
    for a, b in zip(first, second, strict=True):
        if not ignores_output(a):
            assert compared_text(b, patterns) == compared_text(a, patterns), (
                f"{path.name}: rerunning this cell changed its output:\n{a.source[:200]}"
            )
    assert compared_text(count_after_second, []) == compared_text(count_after_first, []), (
        "rerunning the notebook left the first pass's explorers open"
    )
