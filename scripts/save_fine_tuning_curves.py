"""Measure notebook 11's fine-tuning curves and store them in
nbhelpers/data/fine_tuning_curves.json:

    make fine-tuning-curves   # one thread per task, the tasks side by side
    python scripts/save_fine_tuning_curves.py similarity "multiple choice"  # only these

Named tasks are measured again and replace their runs in the file; the others are kept.

Every run fine-tunes the stored course model (or a fresh one, for "no pre-training") on one
of the grammar's labelled tasks and measures its accuracy on 2,000 held-out examples: four
tasks, their starts and λ, seven labelled-set sizes, three seeds (experiments/fine_tuning.py).
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

from nbhelpers.experiments.fine_tuning import (
    CURVES_PATH,
    TASKS,
    load_curves,
    measure_curves,
    save_curves,
)


def one_task(task: str) -> dict:
    torch.set_num_threads(1)
    return measure_curves(tasks=[task])


def main(tasks: list[str]) -> int:
    unknown = [t for t in tasks if t not in TASKS]
    if unknown:
        print(f"unknown tasks {unknown}; the tasks are {TASKS}")
        return 2
    tasks = tasks or list(TASKS)
    start = time.perf_counter()
    with ProcessPoolExecutor(max_workers=min(len(tasks), 2)) as pool:
        parts = list(pool.map(one_task, tasks))  # in the tasks' order, whatever finishes first
    new_runs = {task: part["runs"] for task, part in zip(tasks, parts, strict=True)}
    stored = load_curves() if CURVES_PATH.is_file() else {"runs": [], "details": {}}
    kept = [r for r in stored["runs"] if r["task"] not in tasks]
    runs = [r for task in TASKS for r in new_runs.get(task, [k for k in kept if k["task"] == task])]
    curves = {"recipe": parts[0]["recipe"], "runs": runs}
    minutes = (time.perf_counter() - start) / 60
    here = {
        "torch_version": str(torch.__version__),
        "cpu_capability": torch.backends.cpu.get_cpu_capability(),
        "minutes_for_these_tasks": round(minutes, 1),
    }
    # where and how each task's runs were measured: a kept task keeps its own record
    measured_on = {
        task: here if task in tasks else stored["details"].get("measured_on", {}).get(task)
        for task in TASKS
    }
    path = save_curves(curves, CURVES_PATH, measured_on=measured_on)
    print(f"\nstored {path} ({len(curves['runs'])} runs in {minutes:.1f} min)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
