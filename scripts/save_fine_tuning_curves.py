"""Measure notebook 11's fine-tuning curves and store them in
nbhelpers/data/fine_tuning_curves.json:

    make fine-tuning-curves   # one thread per task, the tasks side by side

Every run fine-tunes the stored course model (or a fresh one, for "no pre-training") on one
of the grammar's labelled tasks and measures its accuracy on 2,000 held-out examples: two
tasks, five starts and λ, seven labelled-set sizes, three seeds (experiments/fine_tuning.py).
Each run is seeded and uses one thread, so on one machine the file is reproduced bit for bit;
on another, torch's rounding differs in the last bits and a few test examples may flip,
within the spread over seeds that the notebook shows. The notebook only plots the file, so
its outputs are the same everywhere. Rerun it whenever the course model, the tasks or the recipe
change.
"""

from __future__ import annotations

import sys
import time
from concurrent.futures import ProcessPoolExecutor

import torch

from nbhelpers.experiments.fine_tuning import CURVES_PATH, TASKS, measure_curves, save_curves


def one_task(task: str) -> dict:
    torch.set_num_threads(1)
    return measure_curves(tasks=[task])


def main() -> int:
    start = time.perf_counter()
    with ProcessPoolExecutor(max_workers=len(TASKS)) as pool:
        parts = list(pool.map(one_task, TASKS))  # in TASKS' order, whatever finishes first
    curves = {"recipe": parts[0]["recipe"], "runs": [r for part in parts for r in part["runs"]]}
    minutes = (time.perf_counter() - start) / 60
    capability = torch.backends.cpu.get_cpu_capability()
    path = save_curves(
        curves,
        CURVES_PATH,
        torch_version=str(torch.__version__),
        cpu_capability=capability,
    )
    print(f"\nstored {path} ({len(curves['runs'])} runs in {minutes:.1f} min)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
