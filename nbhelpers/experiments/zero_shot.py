"""What the pre-trained model knows before any fine-tuning: GPT-1's zero-shot heuristics (§5,
Figure 2 right) on the grammar's tasks, notebook 11.

The paper scores each task with the language model alone, no new parameters; CoLA by
thresholding a sentence's average token log-probability. The same for grammaticality here: a
sentence's token log-probabilities log P(u_i | u_<i) under the model, <EOS> included,
summarised by their mean (GPT-1's heuristic) or their lowest value (one impossible word is
enough to make a sentence ungrammatical); label 1 above a threshold. (GPT-1 scored no
entailment zero-shot; in this grammar the obvious substitution heuristic would read the
answer off the strings, so the course scores none either.)

The threshold is the one that classifies the most of `n_labelled` labelled examples right
(the middle of the best interval): all that zero-shot takes from the labels.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence

import torch

from ..corpus import JapaneseGrammar
from ..corpus.tasks import LabelledExample
from ..corpus.tokenizer import Tokenizer
from ..gpt1 import GPT1, evaluating
from ..support.language import tr
from ..support.validation import check_positive_int


def token_log_probs(model: GPT1, sentences: Sequence[Sequence[str]], tokenizer: Tokenizer):
    """log P(u_i | u_<i) of every predicted token of `<SOS> sentence <EOS>`, for a batch of
    sentences: (B, n) with 0 at the padding, and the mask of the real tokens (B, n)."""
    rows = [tokenizer.encode(" ".join(words), eos=True) for words in sentences]
    ids = tokenizer.pad(rows).to(model.device)  # (B, n + 1), right-padded
    with evaluating(model):
        log_p = model(ids[:, :-1]).log_softmax(-1)  # position t predicts token t + 1
    targets = ids[:, 1:]
    real = targets != tokenizer.pad_id
    picked = log_p.gather(-1, targets.unsqueeze(-1)).squeeze(-1)  # (B, n)
    return picked.masked_fill(~real, 0.0), real


def sentence_scores(model: GPT1, sentences, tokenizer: Tokenizer, chunk: int = 500) -> dict:
    """{"lowest", "mean", "total"}: per sentence, the lowest, the mean and the sum of its
    token log-probabilities, (B,) each; `chunk` sentences at a time."""
    parts = {"lowest": [], "mean": [], "total": []}
    for start in range(0, len(sentences), chunk):
        log_p, real = token_log_probs(model, sentences[start : start + chunk], tokenizer)
        total = log_p.sum(-1)
        parts["total"].append(total)
        parts["mean"].append(total / real.sum(-1))
        parts["lowest"].append(log_p.masked_fill(~real, float("inf")).amin(-1))
    return {name: torch.cat(values) for name, values in parts.items()}


# The heuristics, each a summary of the sentence's token log-probabilities.
METHODS = ("lowest", "mean")


def zero_shot_scores(
    model: GPT1, examples: Sequence[LabelledExample], tokenizer: Tokenizer, method: str = "lowest"
) -> torch.Tensor:
    """One score per grammaticality example, higher meaning label 1: the sentence's "lowest"
    or "mean" token log-probability."""
    if method not in METHODS:
        raise ValueError(
            tr("method must be one of {methods}, got {method!r}", methods=METHODS, method=method)
        )
    return sentence_scores(model, [e.parts[0] for e in examples], tokenizer)[method]


def true_scores(examples: Sequence[LabelledExample]) -> torch.Tensor:
    """log P(sentence) with the grammar's exact probabilities in place of the model's; an
    impossible sentence (log 0) scores -1e9."""
    grammar = JapaneseGrammar()  # the grammar the course model was pre-trained on
    p = [grammar.sentence_probability(list(e.parts[0])) for e in examples]
    return torch.tensor([math.log(q) if q > 0 else -1e9 for q in p], dtype=torch.float64)


def labels_of(examples: Sequence[LabelledExample]) -> torch.Tensor:
    return torch.tensor([e.label for e in examples], dtype=torch.long)


def fit_threshold(scores: torch.Tensor, labels: torch.Tensor) -> float:
    """The threshold θ (label 1 where score > θ) that classifies the most labelled examples
    right: halfway between two neighbouring distinct scores (equal scores fall on one side
    together), the middle one of the best such cuts."""
    check_positive_int("len(scores)", len(scores))
    values, order = scores.double().sort()
    ones = labels[order].long()
    # a cut before sorted position i predicts 0 for the first i examples and 1 for the rest
    zeros_before = torch.cat([ones.new_zeros(1), (1 - ones).cumsum(0)])
    ones_from = torch.cat([ones.flip(0).cumsum(0).flip(0), ones.new_zeros(1)])
    right = zeros_before + ones_from  # (B + 1,)
    n = len(values)
    cuts = [0, *(i for i in range(1, n) if values[i - 1] < values[i]), n]
    best = max(int(right[i]) for i in cuts)
    chosen = [i for i in cuts if int(right[i]) == best]
    i = chosen[len(chosen) // 2]
    low = values[i - 1] if i > 0 else values[0] - 1.0
    high = values[i] if i < n else values[-1] + 1.0
    return float((low + high) / 2)


def accuracy_at(scores: torch.Tensor, labels: torch.Tensor, threshold: float) -> float:
    return float(((scores > threshold).long() == labels).double().mean())


def best_accuracy(scores: torch.Tensor, labels: torch.Tensor) -> float:
    """The accuracy of the best threshold for these very examples (an upper bound)."""
    return accuracy_at(scores, labels, fit_threshold(scores, labels))


ZERO_SHOT_SIZES = (2, 4, 8, 16, 32, 64, 128, 256, 512, 1024)


def measure_zero_shot(
    model: GPT1, sizes: Sequence[int] = ZERO_SHOT_SIZES, seeds: Sequence[int] = (0, 1, 2)
) -> list[dict]:
    """The accuracy on grammaticality's test set (the one fine-tuning is measured on) of each
    heuristic, its threshold set from the first n_labelled examples of the fine-tuning pool of
    each seed, and (n_labelled and seed None) with the best threshold for the test set itself,
    a ceiling; method "truth", the grammar's exact probabilities with that best threshold."""
    from .fine_tuning import split, test_set  # the fine-tuning runs' own examples

    tokenizer = JapaneseGrammar().tokenizer
    test, _ = test_set("grammaticality")
    test_labels = labels_of(test)
    row = dict(task="grammaticality", n_labelled=None, seed=None)
    runs = [dict(row, method="truth", accuracy=exact_accuracy())]
    test_scores = sentence_scores(model, [e.parts[0] for e in test], tokenizer)
    pools = {seed: split("grammaticality", seed)[0][: max(sizes)] for seed in seeds}
    pool_scores = {
        seed: sentence_scores(model, [e.parts[0] for e in pool], tokenizer)
        for seed, pool in pools.items()
    }
    for method in METHODS:
        best = best_accuracy(test_scores[method], test_labels)
        runs.append(dict(row, method=method, accuracy=best))
        for seed, pool in pools.items():
            scores, labels = pool_scores[seed][method], labels_of(pool)
            for k in sizes:
                accuracy = accuracy_at(
                    test_scores[method], test_labels, fit_threshold(scores[:k], labels[:k])
                )
                runs.append(dict(row, method=method, n_labelled=k, seed=seed, accuracy=accuracy))
    return runs


@functools.cache
def exact_accuracy() -> float:
    """The grammar's exact probabilities on grammaticality's test set, with the best threshold:
    the same for every model, so computed once."""
    from .fine_tuning import test_set

    test, _ = test_set("grammaticality")
    return best_accuracy(true_scores(test), labels_of(test))
