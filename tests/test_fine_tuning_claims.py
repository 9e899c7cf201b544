"""Notebook 11's measurements past the curves (experiments/fine_tuning_claims.py): the
language model's KL after fine-tuning against the stored training run and a direct sum, the
linear probe against a second optimiser, and the stored file against its sweep and a rerun."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from nbhelpers.corpus.grammar import RULES
from nbhelpers.experiments.course_model import course_model_details, load_course_model
from nbhelpers.experiments.fine_tuning import SEEDS, SIZES, fine_tune
from nbhelpers.experiments.fine_tuning_claims import (
    AUX_CONDITIONS,
    AUX_SIZES,
    EVAL_EVERY,
    INSIDE_RULES,
    PROBE_FEATURES,
    RECIPES,
    fit_probe,
    language_heldout,
    language_model_kl,
    load_claims,
)


def test_the_kl_before_fine_tuning_is_the_stored_runs_and_a_direct_sum():
    model = load_course_model()
    kl = language_model_kl(model)
    assert kl["all"] == pytest.approx(course_model_details()["heldout_kl"], abs=1e-6)
    assert kl["new tokens"] == 0.0  # the model has no new tokens yet
    heldout = language_heldout()
    ids = heldout.ids[:200]
    with torch.no_grad():
        log_q = F.log_softmax(model(ids[:, :-1]), -1).double()
    p = heldout.true_probs[:200].double()
    per_position = (p * (p.clamp_min(1e-300).log() - log_q)).sum(-1)  # KL(p ‖ q), 0 log 0 = 0
    inside_rules = torch.tensor([RULES.index(r) for r in INSIDE_RULES])
    mask = heldout.mask[:200] & torch.isin(heldout.rules[:200], inside_rules)
    assert float(per_position[mask].mean()) == pytest.approx(
        float(kl["inside clauses"]), rel=0.25
    )  # the first 200 sentences against all 2,000: the same size, not the same number
    assert bool(mask.sum() < heldout.mask[:200].sum())  # clause ends are left out


def test_new_tokens_keep_the_probability_they_are_given():
    model = load_course_model()
    model.add_tokens(2, generator=torch.Generator().manual_seed(0))
    with torch.no_grad():
        model.W_e.weight[-1] = 3 * model.W_e.weight[2]  # a row much like <EOS>'s, larger
    kl = language_model_kl(model)
    assert kl["new tokens"] > 0.5 and kl["all"] > kl["inside clauses"]


def test_the_probe_reaches_what_a_second_optimiser_reaches():
    g = torch.Generator().manual_seed(0)
    x = torch.randn(300, 5, generator=g, dtype=torch.float64)
    y = (x[:, 0] - 0.5 * x[:, 3] > 0.2).long()
    probe = fit_probe(x, y)
    assert float(((probe(x) > 0.5).long() == y).double().mean()) > 0.97
    # the same objective minimised by Newton's method (iteratively reweighted least squares),
    # from zero, on the same objective (mean cross-entropy + 1e-3 |w|², no decay on the bias)
    z = (x - x.mean(0)) / x.std(0)
    design = torch.cat([z, torch.ones(len(z), 1, dtype=torch.float64)], 1)  # a bias column
    decay = torch.diag(torch.tensor([2e-3] * 5 + [0.0], dtype=torch.float64))
    w = torch.zeros(6, dtype=torch.float64)
    for _ in range(30):
        p = torch.sigmoid(design @ w)
        gradient = design.T @ (p - y.double()) / len(y) + decay @ w
        hessian = design.T @ (design * (p * (1 - p))[:, None]) / len(y) + decay
        w = w - torch.linalg.solve(hessian, gradient)

    # the objective is strictly convex: both optimisers reach the same probabilities
    newton = torch.sigmoid(design @ w)
    assert float((probe(x) - newton).abs().max()) < 1e-4


def test_the_stored_measurements_cover_their_sweeps():
    claims = load_claims()
    assert len(claims["recipes"]) == len(RECIPES) * 4 * len(SIZES) * len(SEEDS)
    runs = claims["auxiliary"]["runs"]
    conditions = sum(2 if lm_on == "all" else 1 for _, lm_on in AUX_CONDITIONS)
    assert len(runs) == conditions * len(AUX_SIZES) * len(SEEDS)
    assert all([step for step, _ in r["curve"]] == list(range(EVAL_EVERY, 301, EVAL_EVERY))
               for r in runs)  # fmt: skip
    assert len(claims["layers"]) == 2 * len(SEEDS) * 6  # none, 0, 1, 2, 3, 4 blocks
    assert len(claims["probes"]) == len(PROBE_FEATURES) * len(SEEDS) * len(SIZES)
    assert len(claims["embeddings"]) == 2 * len(SEEDS) * 4  # 2 stacks x 2 embeddings
    for part in ("recipes", "layers", "embeddings", "probes"):
        assert all(0.0 <= r["accuracy"] <= 1.0 for r in claims[part])


def test_the_last_word_probe_reads_the_state_just_before_extract():
    from nbhelpers.experiments.fine_tuning import encode, split, starting_model, task_tokenizer
    from nbhelpers.experiments.fine_tuning_claims import probe_features
    from nbhelpers.gpt1 import evaluating

    examples = split("grammaticality", 0)[0][:5]
    model, new_ids = starting_model(1, seed=0)
    ids, _ = encode("grammaticality", examples, task_tokenizer())
    with evaluating(model):
        h = model.hidden_states(ids)
    at = (ids == new_ids[1]).long().argmax(-1) - 1  # the position before <EXTRACT>
    expected = h[torch.arange(len(examples)), at].double()
    assert torch.equal(probe_features("last word, course model", examples, 0), expected)


@pytest.mark.slow  # a fine-tuning run
def test_a_rerun_of_the_papers_recipe_lands_within_the_stored_spread():
    key = ("entailment", "paper", 256)
    stored = [r["accuracy"] for r in load_claims()["recipes"]
              if (r["task"], r["recipe"], r["n_labelled"]) == key]  # fmt: skip
    result, _ = fine_tune(task="entailment", n_labelled=256, seed=0, **RECIPES["paper"])
    assert min(stored) - 0.02 <= result.accuracy <= max(stored) + 0.02
