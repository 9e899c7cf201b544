"""`make notebooks`: execute notebooks in place, each in a fresh kernel, top to bottom.

Like `jupyter nbconvert --execute --inplace`, plus stream coalescing (which nbconvert's
command line cannot switch on): a cell's stdout is stored as one text, with carriage
returns applied, so a progress line is saved as it ended ("training: step 800 of 800").
A Japanese edition (a path with a `ja` folder) also keeps, in its metadata, the texts of
every figure each cell drew, for tests/test_japanese_outputs.py.

    python scripts/execute_notebooks.py notebooks/*.ipynb solutions/*.ipynb
"""

from __future__ import annotations

import sys
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parent.parent
from notebook_runner import run_notebook  # noqa: E402


def main(paths: list[str]) -> int:
    if not paths:
        print("usage: execute_notebooks.py NOTEBOOK...", file=sys.stderr)
        return 2
    for name in paths:
        path = Path(name)
        japanese = "ja" in path.parts
        notebook, seconds, _ = run_notebook(
            path, coalesce_streams=True, record_figure_texts=japanese
        )
        nbformat.write(notebook, path)
        print(f"executed {path} in {seconds:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
