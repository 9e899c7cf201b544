"""Train notebook 08's model with notebook 08's recipe and store it in nbhelpers/data/.

Notebook 09 times the KV cache on this trained model, and must not depend on notebook 08
having run (the tests run notebooks in parallel), so the model is committed:

    python scripts/save_course_model.py

It runs exactly the training cell of notebook 08, on the CPU with one thread (as `train`
does by default), so that the stored weights are the ones notebook 08 trains on the same
torch build. Rerun it whenever the grammar, the model or the recipe changes; the unit test
tests/test_course_model.py checks that the stored model still fits them.
"""

from __future__ import annotations

import sys

import torch

from nbhelpers import GPT1, seed_everything
from nbhelpers.corpus import JapaneseGrammar
from nbhelpers.training import (
    COURSE_MODEL_PATH,
    corpus_model_config,
    make_heldout,
    save_course_model,
    train,
)

# Notebook 08, section 3: keep these in step with its training cell.
RECIPE = dict(steps=800, batch_size=256, lr=1e-2, seed=0)
INIT_SEED = 0
HELDOUT = dict(n=2000, seed=1)


def main() -> int:
    grammar = JapaneseGrammar()
    config = corpus_model_config(grammar)
    seed_everything(INIT_SEED)
    model = GPT1(config)  # on the CPU: the stored weights do not depend on a GPU's rounding
    heldout = make_heldout(grammar, **HELDOUT)
    history = train(model, grammar, heldout=heldout, **RECIPE)
    path = save_course_model(
        model,
        COURSE_MODEL_PATH,
        **RECIPE,
        init_seed=INIT_SEED,
        heldout_n=HELDOUT["n"],
        heldout_seed=HELDOUT["seed"],
        heldout_kl=history.kl[-1],
        heldout_loss=history.heldout_loss[-1],
        entropy_rate=grammar.entropy_rate(),
        torch_version=str(torch.__version__),
    )
    size = path.stat().st_size
    print(f"stored {path} ({size / 1024:.0f} KiB): held-out KL {history.kl[-1]:.4f} nats")
    return 0


if __name__ == "__main__":
    sys.exit(main())
