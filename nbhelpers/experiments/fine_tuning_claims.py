"""What fine-tuning does, measured past the curves of notebook 11 (experiments/fine_tuning.py):

* `recipes`: GPT-1's own fine-tuning recipe in miniature (PAPER_RECIPE: lr 6.25e-5, 3 epochs,
  warm-up and linear decay, classifier dropout, a new start token), and the same recipe with
  the course's learning rate and steps, on every task, beside the course's recipe;
* `auxiliary`: the auxiliary objective's two claims, "accelerating convergence" (test
  accuracy every 20 steps, λ = 0 and 0.5) and "improving generalization" (the language
  model's exact KL to the grammar before and after fine-tuning), and L1 on the grammatical
  sentences only, to test whether the ungrammatical ones are what λ·L1 costs;
* `layers`: GPT-1's Figure 2 (left), 0 to 4 blocks of the deep model transferred;
* `embeddings`: why the deep model's embeddings alone beat the course model's: each model's
  W_e and W_p under each model's stack of fresh blocks (1 or 4), the embeddings swapped;
* `probes`: a linear read-out (logistic regression) of what the frozen pre-trained model
  already holds, at <EXTRACT>, at the last word (a position pre-training saw: the control) or
  in its per-position log-probabilities, against the number of labelled examples: why
  fine-tuning one <EXTRACT> state lags the zero-shot threshold.

`scripts/save_fine_tuning_claims.py` stores them in nbhelpers/data/fine_tuning_claims.json,
which the notebook plots.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path

import torch

from ..corpus import JapaneseGrammar
from ..corpus.grammar import RULES
from ..fine_tuning import extract_states
from ..gpt1 import GPT1, evaluating
from ..support.language import tr
from .course_model import DEEP_MODEL_PATH, load_course_model
from .fine_tuning import (
    MODEL_PATHS,
    MODELS,
    PAPER_RECIPE,
    SEEDS,
    SIZES,
    FineTuningSettings,
    encode,
    fine_tune,
    split,
    starting_model,
    task_tokenizer,
    test_set,
)
from .heldout import HeldOut, make_heldout, measure
from .zero_shot import labels_of, token_log_probs

CLAIMS_PATH = Path(__file__).resolve().parent.parent / "data" / "fine_tuning_claims.json"
PARTS = ("recipes", "auxiliary", "layers", "embeddings", "probes")

RECIPES = {
    "paper": PAPER_RECIPE,
    # the paper's with the course's learning rate: 3 epochs are still 3 to 96 steps
    "paper, course lr": {**PAPER_RECIPE, "lr": 1e-3},
    # everything of the paper's but its learning rate and epochs: the course's lr and 300 steps
    "paper, course lr and steps": {**PAPER_RECIPE, "lr": 1e-3, "epochs": None},
}
AUX_TASKS = ("grammaticality", "entailment")
AUX_CONDITIONS = ((0.0, "all"), (0.5, "all"), (0.5, "grammatical"))  # (λ, the examples L1 sees)
AUX_SIZES = (128, 1024)
EVAL_EVERY = 20
LAYER_SIZE = 1024  # GPT-1's Figure 2 (left) uses the whole training sets
PROBE_FEATURES = (
    "h_L^m, course model",
    "h_L^m, deep model",
    "last word, course model",
    "log-probabilities",
)
LOG_PROB_FEATURES = 8  # a sentence's 8 lowest token log-probabilities, in order


INSIDE_RULES = tuple(r for r in RULES if r not in ("conjunction", "end"))  # inside a clause


@functools.cache
def language_heldout() -> HeldOut:
    """The held-out sentences the course model was measured on (notebook 08: 2,000, seed 1)."""
    return make_heldout(JapaneseGrammar(), n=2000, seed=1)


def language_model_kl(gpt: GPT1) -> dict:
    """How well the model still models the grammar: its mean KL(true ‖ model) per predicted
    held-out token, in nats, over every position ("all") and inside clauses only ("inside
    clauses": the positions whose next token is a word or a particle, not a conjunction or
    <EOS>, which the task sequences, ending in <EXTRACT>, never teach); and "new tokens",
    the mean probability it gives the tokens fine-tuning added (which the grammar never
    uses: KL counts it as lost) where a clause can end."""
    heldout = language_heldout()
    result = measure(gpt, heldout)  # the KL per rule: the rule of each position's next token
    counts = {rule: int((heldout.rules == RULES.index(rule)).sum()) for rule in INSIDE_RULES}
    inside = sum(result.kl_by_rule[r] * n for r, n in counts.items() if n) / sum(counts.values())
    ends = heldout.mask & ~torch.isin(
        heldout.rules, torch.tensor([RULES.index(r) for r in INSIDE_RULES])
    )
    vocab = heldout.true_probs.shape[-1]
    with evaluating(gpt):
        p = gpt(heldout.ids[:, :-1]).float().softmax(-1)  # (B, n-1, vocab + new)
    return {"all": result.kl, "inside clauses": inside,
            "new tokens": float(p[..., vocab:].sum(-1)[ends].mean())}  # fmt: skip


def measure_recipes(tasks, sizes=SIZES, seeds=SEEDS, progress=None) -> list[dict]:
    """Every task, recipe, size and seed, pre-trained with λ = 0.5; accuracy and steps."""
    runs = []
    for task in tasks:
        for seed in seeds:
            data = split(task, seed)
            for name, recipe in RECIPES.items():
                for size in sizes:
                    settings = FineTuningSettings(task=task, n_labelled=size, seed=seed, **recipe)
                    result, _ = fine_tune(settings, data=data)
                    run = dict(task=task, recipe=name, n_labelled=size, seed=seed)
                    runs.append(dict(run, steps=settings.total_steps, accuracy=result.accuracy))
                    _tick(progress)
    return runs


def measure_auxiliary(tasks=AUX_TASKS, sizes=AUX_SIZES, seeds=SEEDS, progress=None) -> dict:
    """Accuracy every EVAL_EVERY steps and the language model's KL after fine-tuning, for
    each λ and (grammaticality) L1 on the grammatical sentences only; and the KL before."""
    runs = []
    for task in tasks:
        for seed in seeds:
            data = split(task, seed)
            for lam, lm_on in AUX_CONDITIONS:
                if lm_on != "all" and task != "grammaticality":
                    continue
                for size in sizes:
                    settings = FineTuningSettings(task=task, n_labelled=size, seed=seed, lam=lam,
                                                  lm_on=lm_on, eval_every=EVAL_EVERY)  # fmt: skip
                    result, classifier = fine_tune(settings, data=data)
                    runs.append(dict(task=task, lam=lam, lm_on=lm_on, n_labelled=size,
                                     seed=seed, accuracy=result.accuracy,
                                     curve=[list(point) for point in result.curve],
                                     kl=language_model_kl(classifier.gpt)))  # fmt: skip
                    _tick(progress)
    before = language_model_kl(load_course_model())
    return {"kl_before": before, "runs": runs}


def measure_layers(tasks=AUX_TASKS, seeds=SEEDS, progress=None) -> list[dict]:
    """GPT-1's Figure 2 (left) on the deep model: 0 to all blocks transferred, and nothing
    pre-trained (layers None), λ = 0.5, LAYER_SIZE labelled examples."""
    blocks = load_course_model(path=DEEP_MODEL_PATH).config.n_layers
    runs = []
    for task in tasks:
        for seed in seeds:
            data = split(task, seed)
            for layers in (None, *range(blocks + 1)):
                settings = FineTuningSettings(task=task, n_labelled=LAYER_SIZE, seed=seed,
                                              layers=layers, model="deep")  # fmt: skip
                result, _ = fine_tune(settings, data=data)
                runs.append(dict(task=task, layers=layers, n_labelled=LAYER_SIZE, seed=seed,
                                 accuracy=result.accuracy))  # fmt: skip
                _tick(progress)
    return runs


def measure_embeddings(tasks=AUX_TASKS, seeds=SEEDS, progress=None) -> list[dict]:
    """Each model's embeddings (W_e, W_p) under each model's fresh blocks, nothing else
    transferred: λ = 0.5, LAYER_SIZE labelled examples. `stack` is the model whose
    architecture (1 or 4 blocks) is fine-tuned, `embeddings` the model they come from."""
    runs = []
    for task in tasks:
        for seed in seeds:
            data = split(task, seed)
            for stack in MODELS:
                for embeddings in MODELS:
                    settings = FineTuningSettings(task=task, n_labelled=LAYER_SIZE, seed=seed,
                                                  layers=0, model=stack,
                                                  embeddings=embeddings)  # fmt: skip
                    result, _ = fine_tune(settings, data=data)
                    runs.append(dict(task=task, stack=stack, embeddings=embeddings, seed=seed,
                                     accuracy=result.accuracy))  # fmt: skip
            _tick(progress)
    return runs


def probe_features(kind: str, examples, seed: int) -> torch.Tensor:
    """What the frozen pre-trained model holds for each grammaticality example, (B, f): its
    state h_L^m at <EXTRACT> (the new row drawn with `seed`, as a fine-tuning run draws it),
    its last block's state at the sentence's last word, or the sentence's LOG_PROB_FEATURES
    lowest token log-probabilities in increasing order."""
    if kind == "log-probabilities":
        tokenizer = JapaneseGrammar().tokenizer
        log_p, real = token_log_probs(load_course_model(), [e.parts[0] for e in examples],
                                      tokenizer)  # fmt: skip
        ordered = log_p.masked_fill(~real, 0.0).sort(-1).values  # the padding's 0s come last
        return ordered[:, :LOG_PROB_FEATURES].double()
    which = "course" if kind.endswith("course model") else "deep"
    model, new_ids = starting_model(layers=_blocks(which), seed=seed, model=which)
    ids, _ = encode("grammaticality", examples, task_tokenizer())
    with evaluating(model):
        h = model.hidden_states(ids)  # (B, n, d)
    if kind.startswith("last word"):
        before = (ids == new_ids[1]).roll(-1, dims=-1)  # (B, n): True just before <EXTRACT>
        return h[before].double()  # (B, d)
    return extract_states(h, ids, new_ids[1]).double()  # (B, d)


def _blocks(which: str) -> int:
    return load_course_model(path=MODEL_PATHS[which]).config.n_layers


def fit_probe(x: torch.Tensor, y: torch.Tensor, weight_decay: float = 1e-3):
    """Logistic regression on standardised features, fitted by L-BFGS: a function that gives
    P(label 1) for new features. The only parameters trained are a weight per feature and a
    bias: a linear read-out of what the features already hold."""
    mean, std = x.mean(0), x.std(0).clamp_min(1e-8) if len(x) > 1 else torch.ones(x.shape[1])
    z = (x - mean) / std
    w = torch.zeros(x.shape[1] + 1, dtype=torch.float64, requires_grad=True)
    optimizer = torch.optim.LBFGS([w], max_iter=200, line_search_fn="strong_wolfe")

    def closure():
        optimizer.zero_grad()
        logits = z @ w[:-1] + w[-1]
        loss = torch.nn.functional.binary_cross_entropy_with_logits(logits, y.double())
        loss = loss + weight_decay * (w[:-1] ** 2).sum()
        loss.backward()
        return loss

    optimizer.step(closure)
    w = w.detach()
    return lambda new: torch.sigmoid(((new - mean) / std) @ w[:-1] + w[-1])


def measure_probes(sizes=SIZES, seeds=SEEDS, progress=None) -> list[dict]:
    """Grammaticality: the accuracy on the test set of a probe fitted on the first n_labelled
    examples of each seed's pool, for each kind of feature."""
    test, _ = test_set("grammaticality")
    test_labels = labels_of(test)
    runs = []
    for kind in PROBE_FEATURES:
        for seed in seeds:
            pool = split("grammaticality", seed)[0][: max(sizes)]
            x, y = probe_features(kind, pool, seed), labels_of(pool)
            test_x = probe_features(kind, test, seed)
            for size in sizes:
                probe = fit_probe(x[:size], y[:size])
                right = ((probe(test_x) > 0.5).long() == test_labels).double().mean()
                runs.append(dict(features=kind, n_labelled=size, seed=seed,
                                 accuracy=float(right)))  # fmt: skip
            _tick(progress)
    return runs


def _tick(progress):
    if progress is not None:
        progress()


def save_claims(claims: dict, path: str | Path = CLAIMS_PATH) -> Path:
    path = Path(path)
    path.write_text(json.dumps(claims, ensure_ascii=False, indent=0))
    return path


def load_claims(path: str | Path = CLAIMS_PATH) -> dict:
    """The stored measurements: a list of runs for each of PARTS, and "details"."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(
            tr(
                "no fine-tuning measurements at {path}: run `make fine-tuning-claims` to "
                "measure them",
                path=path,
            )
        )
    return json.loads(path.read_text())
