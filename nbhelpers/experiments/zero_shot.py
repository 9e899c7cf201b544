"""What the pre-trained model knows before any fine-tuning: GPT-1's zero-shot heuristics (§5,
Figure 2 right) on the grammar's tasks, notebook 11.

The paper scores each task with the language model alone, no new parameters: CoLA by
thresholding a sentence's average token log-probability, the Winograd schemas by substituting
each candidate into the sentence and comparing the log-probabilities. The same two here:

* grammaticality: a sentence's token log-probabilities log P(u_i | u_<i) under the model,
  <EOS> included, summarised by their mean (GPT-1's heuristic) or their lowest value (one
  impossible word is enough to make a sentence ungrammatical); label 1 above a threshold;
* entailment: the premise rewritten so that the hypothesis holds (its subject and verb put
  in), log P(rewritten) - log P(premise); 0 when the hypothesis already holds, so label 1
  above a threshold just below 0 that the labelled examples set.

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


def rewritten_premise(premise: Sequence[str], hypothesis: Sequence[str]) -> list[str]:
    """The premise with the hypothesis's subject and verb put in (hypothesis: S が V)."""
    rewritten = list(premise)
    rewritten[rewritten.index("が") - 1] = hypothesis[0]
    rewritten[-1] = hypothesis[-1]
    return rewritten


# The heuristics of each task. Similarity has none: GPT-1 gave none for it either.
METHODS = {
    "grammaticality": ("lowest", "mean"),
    "entailment": ("rewrite",),
    "multiple choice": ("rewrite",),
}


def zero_shot_scores(
    task: str, model: GPT1, examples: Sequence[LabelledExample], tokenizer: Tokenizer,
    method: str | None = None,
) -> torch.Tensor:  # fmt: skip
    """One score per example, higher meaning label 1. Grammaticality: the sentence's
    "lowest" or "mean" token log-probability (`method`, "lowest" by default); entailment
    ("rewrite"): log P(rewritten premise) - log P(premise); multiple choice: that score for
    each of the k answers, (B, k), the highest being the model's choice."""
    if task not in METHODS:
        raise ValueError(
            tr("task must be one of {tasks}, got {task!r}", tasks=tuple(METHODS), task=task)
        )
    method = method or METHODS[task][0]
    if method not in METHODS[task]:
        raise ValueError(
            tr(
                "method must be one of {methods} for {task}, got {method!r}",
                methods=METHODS[task],
                task=task,
                method=method,
            )
        )
    return _scores(task, model, examples, tokenizer)[method]


def _scores(task: str, model: GPT1, examples, tokenizer: Tokenizer) -> dict:
    """{method: scores} for every heuristic of `task`, from one pass over the examples."""
    if task == "grammaticality":
        return sentence_scores(model, [e.parts[0] for e in examples], tokenizer)  # lowest, mean
    premises = [e.parts[0] for e in examples]
    before = sentence_scores(model, premises, tokenizer)["total"]
    # batches of the same shapes, row for row: the same sentence gets the same bits, so an
    # answer the premise entails (rewritten = premise) scores exactly 0
    answers = [e.parts[1:] for e in examples]  # one hypothesis, or the k answers
    after = []
    for k in range(len(answers[0])):
        rewritten = [rewritten_premise(p, a[k]) for p, a in zip(premises, answers, strict=True)]
        after.append(sentence_scores(model, rewritten, tokenizer)["total"])
    scores = torch.stack(after, dim=-1) - before.unsqueeze(-1)  # (B, 1) or (B, k)
    return {"rewrite": scores.squeeze(-1) if task == "entailment" else scores}


def true_scores(task: str, examples: Sequence[LabelledExample]) -> torch.Tensor:
    """The same heuristic with the grammar's exact probabilities in place of the model's:
    log P(sentence) for grammaticality, log P(rewritten premise) - log P(premise) for
    entailment and for each answer of multiple choice; an impossible sentence (log 0) scores
    -1e9."""
    grammar = JapaneseGrammar()  # the grammar the course model was pre-trained on

    def log_p(words) -> float:
        p = grammar.sentence_probability(list(words))
        return math.log(p) if p > 0 else -1e9

    if task == "grammaticality":
        return torch.tensor([log_p(e.parts[0]) for e in examples], dtype=torch.float64)
    scores = torch.tensor(
        [[log_p(rewritten_premise(e.parts[0], a)) - log_p(e.parts[0]) for a in e.parts[1:]]
         for e in examples],
        dtype=torch.float64,
    )  # fmt: skip
    return scores.squeeze(-1) if task == "entailment" else scores


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


def choice_accuracy(scores: torch.Tensor, labels: torch.Tensor) -> float:
    """Multiple choice: the share of examples whose right answer scores highest, an answer
    tied with t - 1 others for the highest counting 1/t (the expected accuracy of picking one
    of them at random)."""
    top = scores.amax(dim=-1, keepdim=True)
    tied = (scores == top).sum(-1).double()
    right = (scores.gather(-1, labels.unsqueeze(-1)) == top).squeeze(-1).double()
    return float((right / tied).mean())


def best_accuracy(scores: torch.Tensor, labels: torch.Tensor) -> float:
    """The accuracy of the best threshold for these very examples (an upper bound)."""
    return accuracy_at(scores, labels, fit_threshold(scores, labels))


ZERO_SHOT_SIZES = (2, 4, 8, 16, 32, 64, 128, 256, 512, 1024)


def measure_zero_shot(
    model: GPT1, tasks: Sequence[str] = tuple(METHODS), sizes: Sequence[int] = ZERO_SHOT_SIZES,
    seeds: Sequence[int] = (0, 1, 2),
) -> list[dict]:  # fmt: skip
    """The accuracy on each task's test set (the one fine-tuning is measured on) of each
    heuristic, its threshold set from the first n_labelled examples of the fine-tuning pool of
    each seed, and (n_labelled and seed None) with the best threshold for the test set;
    method "truth", the heuristic with the grammar's exact probabilities (exact_accuracy); and
    for the pair tasks method "no model", the string comparison that uses no model.
    Multiple choice needs no threshold: its rows have n_labelled None."""
    from .fine_tuning import split, test_set  # the fine-tuning runs' own examples

    tokenizer = JapaneseGrammar().tokenizer
    runs = []
    for task in tasks:
        test, _ = test_set(task)
        test_labels = labels_of(test)
        truth = dict(task=task, method="truth", n_labelled=None, seed=None)
        runs.append(dict(truth, accuracy=exact_accuracy(task)))
        if task != "grammaticality":  # the baseline a pair task's heuristic must beat
            runs.append(dict(truth, method="no model", accuracy=string_comparison(task)))
        if task == "multiple choice":  # no threshold: the highest-scoring answer is chosen
            scores = zero_shot_scores(task, model, test, tokenizer)
            accuracy = choice_accuracy(scores, test_labels)
            runs.append(dict(truth, method="rewrite", accuracy=accuracy))
            continue
        test_scores = _scores(task, model, test, tokenizer)
        pools = {seed: split(task, seed)[0][: max(sizes)] for seed in seeds}
        pool_scores = {seed: _scores(task, model, pool, tokenizer) for seed, pool in pools.items()}
        for method in METHODS[task]:
            best = best_accuracy(test_scores[method], test_labels)
            runs.append(dict(task=task, method=method, n_labelled=None, seed=None, accuracy=best))
            for seed, pool in pools.items():
                scores, labels = pool_scores[seed][method], labels_of(pool)
                for k in sizes:
                    threshold = fit_threshold(scores[:k], labels[:k])
                    accuracy = accuracy_at(test_scores[method], test_labels, threshold)
                    runs.append(
                        dict(task=task, method=method, n_labelled=k, seed=seed, accuracy=accuracy)
                    )
    return runs


@functools.cache
def exact_accuracy(task: str) -> float:
    """The heuristic with the grammar's exact probabilities on `task`'s test set, with the best
    threshold (or the highest-scoring answer): the same for every model, so computed once."""
    from .fine_tuning import test_set

    test, _ = test_set(task)
    scores, labels = true_scores(task, test), labels_of(test)
    if task == "multiple choice":
        return choice_accuracy(scores, labels)
    return best_accuracy(scores, labels)


@functools.cache
def string_comparison(task: str) -> float:
    """No model: the answer whose rewritten premise is the premise itself is taken as right
    (entailment: label 1 when the hypothesis's rewrite is the premise). Its accuracy on the
    test set shows what a pair task's zero-shot heuristic can read without any model."""
    from .fine_tuning import test_set

    test, _ = test_set(task)
    same = [[rewritten_premise(e.parts[0], a) == list(e.parts[0]) for a in e.parts[1:]]
            for e in test]  # fmt: skip
    guesses = [int(s[0]) if task == "entailment" else s.index(True) for s in same]
    return sum(g == e.label for g, e in zip(guesses, test, strict=True)) / len(test)
