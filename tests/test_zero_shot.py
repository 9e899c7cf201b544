"""The zero-shot heuristics of notebook 11 (GPT-1 §5): the scores are the model's own token
log-probabilities (checked against F.cross_entropy), and the threshold is the best one for
the labelled examples (checked by trying every cut)."""

from __future__ import annotations

import itertools

import pytest
import torch
import torch.nn.functional as F

from nbhelpers import JapaneseGrammar
from nbhelpers.corpus.tasks import LabelledExample, make_task
from nbhelpers.experiments.course_model import load_course_model
from nbhelpers.experiments.zero_shot import (
    accuracy_at,
    fit_threshold,
    labels_of,
    measure_zero_shot,
    sentence_scores,
    token_log_probs,
    true_scores,
    zero_shot_scores,
)


@pytest.fixture(scope="module")
def lm():
    return load_course_model(dtype=torch.float64)


@pytest.fixture(scope="module")
def words():
    return JapaneseGrammar().tokenizer


def test_token_log_probs_are_the_cross_entropy_terms(lm, words):
    sentences = [["犬", "が", "河岸", "を", "歩く"], ["白い", "鳥", "が", "空", "を", "飛ぶ"]]
    log_p, real = token_log_probs(lm, sentences, words)
    for row, sentence in enumerate(sentences):
        ids = words.encode(" ".join(sentence), eos=True)
        with torch.no_grad():
            expected = -F.cross_entropy(lm(ids[:-1]), ids[1:], reduction="none")
        n = len(expected)
        assert int(real[row].sum()) == n == len(sentence) + 1
        torch.testing.assert_close(log_p[row, :n], expected)
        assert bool((log_p[row, n:] == 0).all())
    scores = sentence_scores(lm, sentences, words)
    torch.testing.assert_close(scores["total"], log_p.sum(-1))
    torch.testing.assert_close(scores["lowest"][0], log_p[0, :6].min())


def brute_force_best(scores, labels):
    """The most examples any threshold classifies right: every cut between sorted scores."""
    values = sorted(set(scores.tolist()))
    middles = [(a + b) / 2 for a, b in itertools.pairwise(values)]
    cuts = [values[0] - 1, *middles, values[-1] + 1]
    return max(accuracy_at(scores, labels, c) for c in cuts)


@pytest.mark.parametrize("seed", range(20))
def test_the_threshold_is_the_best_for_the_labelled_examples(seed):
    g = torch.Generator().manual_seed(seed)
    n = int(torch.randint(1, 30, (1,), generator=g))
    scores = torch.randint(-4, 4, (n,), generator=g).double()  # many ties, as 0 in entailment
    labels = torch.randint(0, 2, (n,), generator=g)
    assert accuracy_at(scores, labels, fit_threshold(scores, labels)) == brute_force_best(
        scores, labels
    )


def test_ties_fall_on_one_side_together():
    scores = torch.tensor([-3.0, 0.0, 0.0, 0.0, -2.0])
    labels = torch.tensor([0, 1, 1, 1, 0])
    threshold = fit_threshold(scores, labels)
    assert -2.0 < threshold < 0.0 and accuracy_at(scores, labels, threshold) == 1.0


def test_the_grammars_own_probabilities_separate_grammaticality_exactly():
    examples = make_task("grammaticality", 200, seed=5)
    scores, labels = true_scores(examples), labels_of(examples)
    assert accuracy_at(scores, labels, fit_threshold(scores, labels)) == 1.0


def test_the_measurement_has_every_row(lm):
    runs = measure_zero_shot(lm, sizes=(4, 16), seeds=(0,))
    kinds = {(r["task"], r["method"], r["n_labelled"]) for r in runs}
    assert ("grammaticality", "truth", None) in kinds
    for method in ("lowest", "mean"):
        assert {("grammaticality", method, n) for n in (None, 4, 16)} <= kinds
    assert all(0.0 <= r["accuracy"] <= 1.0 for r in runs)


def test_bad_input_names_the_argument(lm, words):
    example = [LabelledExample((("犬", "が", "河岸", "を", "歩く"),), 1)]
    with pytest.raises(ValueError, match="method must be one of"):
        zero_shot_scores(lm, example, words, "median")
