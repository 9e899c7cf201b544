"""`make notebooks`: execute notebooks in place, each in a fresh kernel, top to bottom.

Like `jupyter nbconvert --execute --inplace`, plus stream coalescing (which nbconvert's
command line cannot switch on): a cell's stdout is stored as one text, with carriage
returns applied, so a progress line is saved as it ended ("training: step 800 of 800").

    python scripts/execute_notebooks.py notebooks/*.ipynb solutions/*.ipynb
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient


def main(paths: list[str]) -> int:
    if not paths:
        print("usage: execute_notebooks.py NOTEBOOK...", file=sys.stderr)
        return 2
    for name in paths:
        path = Path(name)
        notebook = nbformat.read(path, as_version=4)
        start = time.perf_counter()
        NotebookClient(
            notebook,
            timeout=600,
            kernel_name="python3",
            coalesce_streams=True,
            resources={"metadata": {"path": str(path.parent.resolve())}},
        ).execute()
        nbformat.write(notebook, path)
        print(f"executed {path} in {time.perf_counter() - start:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
