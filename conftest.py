"""pytest set-up shared by the unit tests and nbval.

With `--rerun-offline` (as `make nbval` runs it), nbval blocks socket connections in every
kernel, checks the layout of every figure a notebook shows (no overlapping or clipped
texts, in any language), and runs each course notebook (notebooks/) twice in one kernel:
first the English edition, then, as the second pass, its Japanese edition, each compared
with its own stored outputs. The Japanese code cells are the English ones (plus the
`%env NBHELPERS_LANG=ja` that switches the language), so the second pass is a rerun of
the same code in the same kernel: learners rerun cells all the time, and it must print
the same checked outputs, now in Japanese, and leave no stale explorer open. A notebook
collected without its other edition runs twice in its own language. The solutions run
once. The blocked network proves the course needs none at run time.
"""

import copy
import os
from collections import defaultdict
from datetime import datetime
from pathlib import Path

import nbformat
import pytest

# The kernels that nbval and the browser tests start inherit this environment: with tests/ on
# their PYTHONPATH they import its helpers (layout.py, answers/) as pytest's pythonpath does.
TESTS = str(Path(__file__).resolve().parent / "tests")
os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [TESTS, os.environ.get("PYTHONPATH")]))

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
CHECK_FIGURE_LAYOUT = """\
import nbhelpers as _nbhelpers
import nbhelpers.figures as _figures
import nbhelpers.figures.canvas as _canvas
from layout import layout_problems as _layout_problems

_show_figure = _canvas.show_figure

def _checked_show_figure(figure):
    _problems = _layout_problems(figure)
    _name = figure.get_suptitle() or (figure.axes[0].get_title() if figure.axes else "")
    assert not _problems, f"figure {_name!r}: {_problems}"
    import os as _os
    if _os.environ.get("NBHELPERS_LAYOUT_COUNTS"):  # a file: how many texts each figure shows
        from layout import text_counts as _text_counts
        with open(_os.environ["NBHELPERS_LAYOUT_COUNTS"], "a", encoding="utf-8") as _file:
            _file.write("%d %d %r\\n" % (*_text_counts(figure), _name))
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
    editions = {Path(str(notebook.fspath)): notebook for notebook in by_notebook}
    japanese = {
        notebook: editions[japanese_path]
        for notebook in by_notebook
        if (japanese_path := japanese_edition(notebook)) in editions
    }
    second_pass_of = set(japanese.values())
    # Longest first (what the stored run took, second pass included), so that pytest-xdist
    # (`--dist loadfile --no-loadscope-reorder`) does not start notebook 08 last.
    order = sorted(
        by_notebook,
        key=lambda nb: (
            -(stored_seconds(nb) + (stored_seconds(japanese[nb]) if nb in japanese else 0))
        ),
    )
    for notebook in order:
        cells = by_notebook[notebook]
        if notebook in second_pass_of:
            continue  # run as its English edition's second pass, in that kernel
        rerun += [
            injected(notebook, "block the network", BLOCK_NETWORK),
            injected(notebook, "check figure layout", CHECK_FIGURE_LAYOUT),
            *cells,
        ]
        if not is_course_notebook(notebook):
            continue  # solutions/ hold no explorer and no state worth a second pass
        if notebook in japanese:
            second = [
                again(
                    notebook,
                    cell,
                    f"rerun as {japanese[notebook].fspath.relto(str(notebook.config.rootpath))}",
                )
                for cell in by_notebook[japanese[notebook]]
            ]
        else:
            second = [again(notebook, cell, "rerun") for cell in cells]
        rerun += [
            injected(notebook, "count open explorers", COUNT_OPEN_EXPLORERS),
            *second,
            injected(notebook, "no explorer left open", SAME_EXPLORERS_AFTER_RERUN),
        ]
    items[:] = rerun


def stored_seconds(notebook) -> float:
    """How long the stored run of a notebook took, from the execution times Jupyter keeps in
    each cell's metadata (0 where there are none)."""
    stamps = [
        datetime.fromisoformat(stamp.replace("Z", "+00:00"))
        for cell in notebook.nb.cells
        for key in ("iopub.execute_input", "shell.execute_reply")
        if (stamp := cell.get("metadata", {}).get("execution", {}).get(key))
    ]
    return (max(stamps) - min(stamps)).total_seconds() if stamps else 0.0


def is_course_notebook(notebook) -> bool:
    """notebooks/X.ipynb or notebooks/ja/X.ipynb, not a solution."""
    folder = Path(str(notebook.fspath)).parent
    return folder.name == "notebooks" or folder.parent.name == "notebooks"


def japanese_edition(notebook) -> Path | None:
    """notebooks/X.ipynb -> notebooks/ja/X.ipynb (None for anything else)."""
    path = Path(str(notebook.fspath))
    if path.parent.name != "notebooks":
        return None
    return path.parent / "ja" / path.name


def injected(notebook, name, source):
    """A cell the notebook does not have, run in its kernel; it must print nothing."""
    from nbval.plugin import IPyNbCell  # here: importing nbval costs the quick tier 4 s

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


def again(notebook, item, label):
    """A cell run in `notebook`'s kernel and compared with its own stored outputs: the same
    cell a second time, or the Japanese edition's cell after the English pass."""
    from nbval.plugin import IPyNbCell

    second = IPyNbCell.from_parent(
        notebook,
        name=f"{item.name} ({label})",
        cell_num=item.cell_num,
        # nbval merges split stdout streams into the stored cell in place: a copy keeps the
        # reference of the second pass as it is on disk.
        cell=copy.deepcopy(item.cell),
        options=item.options,
    )
    second.add_marker(pytest.mark.slow)
    return second
