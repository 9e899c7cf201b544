"""Train notebook 08's model with notebook 08's recipe and store it, with the record of its
training run, in nbhelpers/data/course_model.pt:

    make course-model        # ATEN_CPU_CAPABILITY=default OMP_NUM_THREADS=1, as make notebooks

Notebooks 08-10 quote this run and analyse this model, so that what they print is the same
on every machine: a live run of 800 steps turns each CPU's last-bit rounding into different
digits. The script runs exactly notebook 08's training cell, on the CPU with one thread and
torch's portable (non-vectorised) kernels, the settings `make notebooks` executes the
notebooks with, so notebook 08's stored live run is this one. Rerun it whenever the grammar,
the model or the recipe changes; tests/test_course_model.py checks that the stored model
still fits them.
"""

from __future__ import annotations

import sys

import torch

from nbhelpers import GPT1, seed_everything
from nbhelpers.corpus import JapaneseGrammar
from nbhelpers.experiments.course_model import COURSE_MODEL_PATH, save_course_model
from nbhelpers.experiments.heldout import make_heldout
from nbhelpers.experiments.pretraining import corpus_model_config, train

# Notebook 08, its training cell: keep these in step (tests/test_course_model.py compares).
RECIPE = dict(steps=800, batch_size=256, lr=1e-2, seed=0)
CHECKPOINTS = [0, 100, 300, 800]
INIT_SEED = 0
HELDOUT = dict(n=2000, seed=1)


def main() -> int:
    capability = torch.backends.cpu.get_cpu_capability()
    if capability != "DEFAULT" or torch.get_num_threads() != 1:
        print(
            f"run this with `make course-model` (ATEN_CPU_CAPABILITY=default OMP_NUM_THREADS=1); "
            f"torch uses {capability} kernels and {torch.get_num_threads()} threads here",
            file=sys.stderr,
        )
        return 2
    grammar = JapaneseGrammar()
    config = corpus_model_config(grammar)
    seed_everything(INIT_SEED)
    model = GPT1(config)  # on the CPU: the stored weights do not depend on a GPU's rounding
    heldout = make_heldout(grammar, **HELDOUT)
    history = train(
        model, grammar, heldout=heldout, checkpoints=CHECKPOINTS, progress=False, **RECIPE
    )
    path = save_course_model(
        model,
        history,
        COURSE_MODEL_PATH,
        **RECIPE,
        init_seed=INIT_SEED,
        heldout_n=HELDOUT["n"],
        heldout_seed=HELDOUT["seed"],
        heldout_kl=history.kl[-1],
        heldout_loss=history.heldout_loss[-1],
        entropy_rate=grammar.entropy_rate(),
        torch_version=str(torch.__version__),
        cpu_capability=capability,
    )
    size = path.stat().st_size
    print(f"stored {path} ({size / 1024:.0f} KiB): held-out KL {history.kl[-1]:.4f} nats")
    return 0


if __name__ == "__main__":
    sys.exit(main())
