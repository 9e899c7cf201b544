"""Execute a notebook in a fresh kernel, in memory, for the scripts that time, check or
re-execute the course (benchmarks/bench_course.py, gpu_check.py, execute_notebooks.py).
Not part of nbhelpers: the course itself never runs notebooks, so the package does not
depend on nbclient."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Mapping
from pathlib import Path

import nbformat
from nbclient import NotebookClient

# Run after the last cell, in the same kernel: the kernel's peak resident set size over its
# whole run (nbhelpers' peak_memory resets the kernel's own peak figure on the way).
PEAK_RSS_CELL = """\
from nbhelpers.support.benchmarking import process_peak_bytes as _peak
print(_peak())
"""
SCRIPTS = Path(__file__).resolve().parent
# Run at the kernel's start, before the first cell (so execution counts do not move), and
# after the last: the figure texts each cell drew (figure_texts.py).
# (this folder reaches the kernel on its PYTHONPATH)
RECORDER_START = "import figure_texts; figure_texts.install()"
RECORDER_CELL = "print(figure_texts.dump())"


def run_notebook(
    path: str | os.PathLike,
    *,
    env: Mapping[str, str] | None = None,
    timeout: int = 600,
    kernel_name: str = "python3",
    measure_memory: bool = False,
    coalesce_streams: bool = False,
    record_figure_texts: bool = False,
):
    """Execute a notebook in a fresh kernel, in memory (the file is not touched).

    Returns (executed notebook, wall-clock seconds including the kernel's start-up, peak
    resident bytes of the kernel process or None). `env` adds to or overrides the kernel's
    environment. `coalesce_streams` merges each cell's stdout (and applies carriage returns),
    as `make notebooks` stores it. `record_figure_texts` stores in the notebook's metadata
    (nbhelpers.figure_texts: {cell id: [texts]}) the texts of every figure each cell drew.
    A cell that raises stops the run with nbclient's CellExecutionError, which names the
    cell.
    """
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"path must be an existing notebook file, got {str(path)!r}")
    notebook = nbformat.read(path, as_version=4)
    probe = nbformat.v4.new_code_cell(PEAK_RSS_CELL) if measure_memory else None
    if probe is not None:
        notebook.cells.append(probe)
    recorder = nbformat.v4.new_code_cell(RECORDER_CELL) if record_figure_texts else None
    if recorder is not None:
        notebook.cells.append(recorder)
    client = NotebookClient(
        notebook,
        timeout=timeout,
        kernel_name=kernel_name,
        coalesce_streams=coalesce_streams,
        resources={"metadata": {"path": str(path.parent.resolve())}},
        extra_arguments=[f"--IPKernelApp.exec_lines={[RECORDER_START]!r}"]
        if record_figure_texts
        else [],
    )
    kernel_env = {**os.environ, **(env or {})}
    if record_figure_texts:  # the recorder's module, figure_texts.py, sits beside this file
        paths = [str(SCRIPTS), kernel_env.get("PYTHONPATH", "")]
        kernel_env["PYTHONPATH"] = os.pathsep.join(filter(None, paths))
    start = time.perf_counter()
    client.execute(env=kernel_env)
    seconds = time.perf_counter() - start
    if recorder is not None:
        notebook.cells.remove(recorder)
        by_run = json.loads("".join(o.get("text", "") for o in recorder.outputs))
        # nbclient runs the code cells that are not empty, in order
        ran = [c.id for c in notebook.cells if c.cell_type == "code" and c.source.strip()]
        texts = {ran[int(index)]: found for index, found in by_run.items()}
        notebook.metadata.setdefault("nbhelpers", {})["figure_texts"] = texts
    peak = None
    if probe is not None:
        notebook.cells.remove(probe)
        peak = int("".join(o.get("text", "") for o in probe.outputs).strip())
    return notebook, seconds, peak
