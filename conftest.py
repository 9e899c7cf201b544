"""pytest set-up shared by the unit tests and nbval.

With `--rerun-offline` (as `make nbval` runs it), nbval blocks socket connections in every
kernel, checks the layout of every figure a notebook shows (no overlapping or clipped
texts, in any language), and executes each course notebook (notebooks/) twice in one
kernel, comparing both passes with the stored outputs (the solutions, once):
learners rerun cells all the time, so a second pass must print the same checked outputs and
leave no stale explorer open; the blocked network proves the course needs none at run time.
One kernel does what used to take a second, separate execution of every notebook.
"""

import copy
from collections import defaultdict
from pathlib import Path

import nbformat
import pytest
from nbval.plugin import IPyNbCell

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
except OSError as _error:
    assert "blocked" in str(_error)
"""

# Every figure a notebook shows must be laid out cleanly, in every language: no two texts
# overlapping, none sticking out of the figure (tests/layout.py). show_figure is wrapped
# before the notebook imports it.
CHECK_FIGURE_LAYOUT = f"""\
import sys as _sys
_sys.path.insert(0, {str(Path(__file__).resolve().parent / "tests")!r})
import nbhelpers as _nbhelpers
import nbhelpers.figures as _figures
import nbhelpers.figures.canvas as _canvas
from layout import layout_problems as _layout_problems

_show_figure = _canvas.show_figure

def _checked_show_figure(figure):
    _problems = _layout_problems(figure)
    _name = figure.get_suptitle() or (figure.axes[0].get_title() if figure.axes else "")
    assert not _problems, f"figure {{_name!r}}: {{_problems}}"
    return _show_figure(figure)

_canvas.show_figure = _figures.show_figure = _nbhelpers.show_figure = _checked_show_figure
"""

# An explorer that is still open holds a comm; rerunning its cell must close the old one.
COUNT_OPEN_EXPLORERS = """\
def _open_explorers():
    from ipywidgets.widgets.widget import _instances
    from nbhelpers.widgets import FigureExplorer
    return sum(isinstance(w, FigureExplorer) and w.comm is not None for w in _instances.values())
_explorers_after_first_pass = _open_explorers()
"""
SAME_EXPLORERS_AFTER_RERUN = """\
assert _open_explorers() == _explorers_after_first_pass, (
    f"rerunning the notebook left the first pass's explorers open: "
    f"{_open_explorers()} open now, {_explorers_after_first_pass} after the first pass"
)
"""


def pytest_addoption(parser):
    parser.addoption(
        "--rerun-offline",
        action="store_true",
        help="nbval: block the network, then run each notebook twice in one kernel",
    )


def pytest_collectstart(collector):
    # nbval: warnings on stderr (a deprecation in a dependency, say) are not part of what a
    # notebook teaches, so they are not compared. Errors still fail the cell.
    if is_notebook(collector):
        collector.skip_compare += ("stderr",)


def is_notebook(node) -> bool:
    return bool(getattr(node, "fspath", None)) and node.fspath.ext == ".ipynb"


def pytest_collection_modifyitems(config, items):
    # Executing a notebook is the slow tier: `pytest -m "not slow"` leaves nbval out.
    for item in items:
        if is_notebook(item):
            item.add_marker(pytest.mark.slow)
    if not config.getoption("rerun_offline"):
        return
    rerun, by_notebook = [], {}
    for item in items:
        if is_notebook(item):
            by_notebook.setdefault(item.parent, []).append(item)
        else:
            rerun.append(item)
    for notebook, cells in by_notebook.items():
        rerun += [
            injected(notebook, "block the network", BLOCK_NETWORK),
            injected(notebook, "check figure layout", CHECK_FIGURE_LAYOUT),
            *cells,
        ]
        if notebook.fspath.dirpath().basename != "notebooks":
            # solutions/ hold no explorer and no state worth a second pass; the Japanese
            # editions (notebooks/ja/) run the English code, whose second pass is tested.
            continue
        rerun += [
            injected(notebook, "count open explorers", COUNT_OPEN_EXPLORERS),
            *(again(notebook, cell) for cell in cells),
            injected(notebook, "no explorer left open", SAME_EXPLORERS_AFTER_RERUN),
        ]
    items[:] = rerun


def injected(notebook, name, source):
    """A cell the notebook does not have, run in its kernel; it must print nothing."""
    cell = nbformat.v4.new_code_cell(source)
    item = IPyNbCell.from_parent(
        notebook,
        name=f"rerun-offline: {name}",
        cell_num=-1,
        cell=cell,
        options=defaultdict(bool, check=True),
    )
    item.add_marker(pytest.mark.slow)
    return item


def again(notebook, item):
    """The same cell, run a second time and compared with the same stored outputs."""
    second = IPyNbCell.from_parent(
        notebook,
        name=f"{item.name} (rerun)",
        cell_num=item.cell_num,
        # nbval merges split stdout streams into the stored cell in place: a copy keeps the
        # reference of the second pass as it is on disk.
        cell=copy.deepcopy(item.cell),
        options=item.options,
    )
    second.add_marker(pytest.mark.slow)
    return second
