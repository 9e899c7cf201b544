"""Measure what notebook 11 shows of fine-tuning past its curves, and store it in
nbhelpers/data/fine_tuning_claims.json (experiments/fine_tuning_claims.py):

    make fine-tuning-claims                            # every part, two processes
    python scripts/save_fine_tuning_claims.py probes   # only these parts; the others are kept

The parts: "recipes" (GPT-1's fine-tuning recipe beside the course's, every task), "auxiliary"
(accuracy against steps and the language model's KL for λ = 0 and 0.5, and L1 on the
grammatical sentences only), "layers" (0 to 4 blocks of the deep model transferred),
"embeddings" (each model's embeddings under each model's fresh blocks) and "probes" (linear
read-outs of the frozen pre-trained model). Every run is seeded and uses one
thread: on one machine the file is reproduced bit for bit; another CPU's rounding may flip a
few test examples, within the spread over seeds the notebook shows. Rerun it whenever the
models, the tasks or the recipes change.
"""

from __future__ import annotations

import sys
import time
from concurrent.futures import ProcessPoolExecutor

import torch

from nbhelpers.experiments.fine_tuning import TASKS
from nbhelpers.experiments.fine_tuning_claims import (
    CLAIMS_PATH,
    PARTS,
    load_claims,
    measure_auxiliary,
    measure_embeddings,
    measure_layers,
    measure_probes,
    measure_recipes,
    save_claims,
)

# (part, what to call): the recipes, the longest part, are split by task over the processes
JOBS = [
    ("recipes", lambda: measure_recipes(TASKS[:2])),
    ("recipes", lambda: measure_recipes(TASKS[2:])),
    ("auxiliary", measure_auxiliary),
    ("layers", measure_layers),
    ("embeddings", measure_embeddings),
    ("probes", measure_probes),
]


def run(index: int):
    torch.set_num_threads(1)
    start = time.perf_counter()
    result = JOBS[index][1]()
    print(f"  {JOBS[index][0]}: {time.perf_counter() - start:.0f} s", flush=True)
    return result


def main(parts: list[str]) -> int:
    unknown = [p for p in parts if p not in PARTS]
    if unknown:
        print(f"unknown parts {unknown}; the parts are {PARTS}")
        return 2
    parts = parts or list(PARTS)
    start = time.perf_counter()
    jobs = [i for i, (part, _) in enumerate(JOBS) if part in parts]
    with ProcessPoolExecutor(max_workers=2) as pool:
        results = list(pool.map(run, jobs))
    claims = load_claims() if CLAIMS_PATH.is_file() else {"details": {}}
    for part in parts:
        pieces = [r for i, r in zip(jobs, results, strict=True) if JOBS[i][0] == part]
        claims[part] = pieces[0] if len(pieces) == 1 else [run for p in pieces for run in p]
    minutes = (time.perf_counter() - start) / 60
    here = {
        "torch_version": str(torch.__version__),
        "cpu_capability": torch.backends.cpu.get_cpu_capability(),
    }
    claims["details"] = {**claims.get("details", {}), **{part: here for part in parts}}
    path = save_claims(claims)
    print(f"stored {path} ({', '.join(parts)} in {minutes:.1f} min)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
