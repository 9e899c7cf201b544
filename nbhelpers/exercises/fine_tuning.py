"""Checkers for notebook 11, fine-tuning: the similarity input transformation, L3 = L2 + λ·L1,
and one fine-tuning step."""

from __future__ import annotations

import torch
import torch.nn.functional as F

from ..corpus.tokenizer import EOS, SOS
from ..fine_tuning import DELIM, EXTRACT, GPT1Classifier, fine_tuning_loss
from ..support.language import tr
from .core import *  # noqa: F403 (the checkers' toolkit: core.__all__)
from .gpt_cases import as_loss, parameters_of, small_model, with_stale_gradients
from .references import PlainSGD


@leaves_state_alone
def check_similarity_inputs(fn) -> CheckResult:
    """fn(a, b) -> [sequence, sequence]: GPT-1's similarity transformation, both orders,
    each <SOS> first text <DELIM> second text <EXTRACT>. Written out from the paper's
    Figure 1; the tokens are lists of str."""
    check_function("fn", fn)
    cases = []
    for name, a, b in (
        ("犬が河岸を歩く / 猫が公園を走る", ["犬", "が", "河岸", "を", "歩く"],
         ["猫", "が", "公園", "を", "走る"]),
        (tr("texts of different lengths"), ["鳥", "が", "飛ぶ"],
         ["毎朝", "魚", "が", "川", "を", "泳ぐ"]),
    ):  # fmt: skip
        ab = [SOS, *a, DELIM, *b, EXTRACT]
        ba = [SOS, *b, DELIM, *a, EXTRACT]
        mistakes = [
            (tr("one order only: similarity has no order, so GPT-1 feeds both, a-b and b-a"),
             [ab]),
            (tr("the <SOS> start token is missing at the front"),
             [ab[1:], ba[1:]]),
            (tr("the <EXTRACT> token is missing at the end: W_y reads the state there"),
             [ab[:-1], ba[:-1]]),
            (tr("<EOS> is not the extract token: end with <EXTRACT>"),
             [[*ab[:-1], EOS], [*ba[:-1], EOS]]),
            (tr("the <DELIM> token between the two texts is missing"),
             [[SOS, *a, *b, EXTRACT], [SOS, *b, *a, EXTRACT]]),
        ]  # fmt: skip
        cases.append(
            Case(name, f"a = {' '.join(a)}, b = {' '.join(b)}",
                 lambda f, a=a, b=b: _lists(f(list(a), list(b))), [ab, ba], mistakes=mistakes)
        )  # fmt: skip
    return run_cases(
        "similarity_inputs",
        fn,
        cases,
        tr("return the similarity task's two input sequences."),
    )


def _lists(got):
    if isinstance(got, (list, tuple)) and all(isinstance(s, (list, tuple)) for s in got):
        return [list(s) for s in got]
    return got


def _log_likelihoods(class_logits, labels, lm_logits, ids, pad_id, *, shift=True, pad=True):
    L2 = -F.cross_entropy(class_logits, labels, reduction="sum")
    logits, targets = (lm_logits[:, :-1], ids[:, 1:]) if shift else (lm_logits, ids)
    L1 = -F.cross_entropy(
        logits.flatten(0, 1), targets.flatten(), ignore_index=pad_id if pad else -100,
        reduction="sum",
    )  # fmt: skip
    return L2.double(), L1.double()


@leaves_state_alone
def check_l3(fn) -> CheckResult:
    """fn(class_logits, labels, lm_logits, ids, lam, pad_id) -> L3 = L2 + λ·L1, a
    log-likelihood (sums, not means; no minus sign): L2 = Σ log P(y | x), L1 = Σ log P(u_i |
    u_<i) over the targets that are not pad_id, position t predicting token t + 1. The
    reference is written with F.cross_entropy(reduction="sum")."""
    check_function("fn", fn)
    g = seeded(31)
    cases = []
    for name, B, n, lam in (
        (tr("4 examples, λ = 0.5"), 4, 6, 0.5),
        (tr("2 examples, λ = 0: L3 is L2"), 2, 5, 0.0),
        (tr("3 examples, λ = 2"), 3, 7, 2.0),
    ):
        V, pad_id = 9, 0
        class_logits, lm_logits = randn(g, B, 2, scale=2.0), randn(g, B, n, V, scale=2.0)
        labels = torch.randint(0, 2, (B,), generator=g)
        ids = torch.randint(1, V, (B, n), generator=g)
        ids[0, -2:] = pad_id  # a padded example
        L2, L1 = _log_likelihoods(class_logits, labels, lm_logits, ids, pad_id)
        expected = L2 + lam * L1
        N = int((ids[:, 1:] != pad_id).sum())
        args = (class_logits, labels, lm_logits, ids, pad_id)
        unpadded = _log_likelihoods(*args, pad=False)[1]
        unshifted = _log_likelihoods(*args, shift=False)[1]
        mistakes = [
            (tr("the sign: L3 is a log-likelihood (≤ 0), the loss is its negative"), -expected),
            (tr("λ multiplies L1, the language model's term, not L2"), lam * L2 + L1),
            (tr("means instead of sums: L1 and L2 are sums over the examples and tokens"),
             L2 / B + lam * L1 / N),
            (tr("the <PAD> targets count: leave out the targets equal to pad_id"),
             L2 + lam * unpadded),
            (tr("the targets are not shifted: position t predicts token t + 1"),
             L2 + lam * unshifted),
            (tr("L1 is missing: L3 = L2 + λ·L1"), L2 if lam else None),
        ]  # fmt: skip
        cases.append(
            Case(name, f"B = {B}, n = {n}, n_vocab = {V}, λ = {lam:g}",
                 lambda f, a=(class_logits, labels, lm_logits, ids, lam, pad_id): as_loss(f(*a)),
                 expected, atol=1e-6 * max(1.0, abs(float(expected))), mistakes=mistakes)
        )  # fmt: skip
    return run_cases(
        "l3",
        fn,
        cases,
        tr("return L3, the fine-tuning log-likelihood with the auxiliary language-model term."),
    )


def _classifier(seed: int) -> GPT1Classifier:
    gpt = small_model(seed, n_layers=1)
    return GPT1Classifier(gpt, 2, extract_id=8, seed=seed)  # token 8 serves as <EXTRACT>


def _reference_step(
    classifier, ids, labels, lam, lr, *, zero=True, step=True, lam_used=None, sign=1.0
):
    classifier = with_stale_gradients(classifier).train()
    optimizer = PlainSGD(classifier.parameters(), lr=lr)
    if zero:
        optimizer.zero_grad()
    loss = sign * fine_tuning_loss(classifier, ids, labels,
                                   lam=lam if lam_used is None else lam_used, pad_id=0)  # fmt: skip
    loss.backward()
    if step:
        optimizer.step()
    return as_loss(loss), parameters_of(classifier)


@leaves_state_alone
def check_fine_tuning_step(fn) -> CheckResult:
    """fn(classifier, optimizer, ids, labels, lam, pad_id) must make one fine-tuning step on
    the loss -L2/B - λ·L1/N (the classifier's mean cross-entropy plus λ times the language
    model's), clearing old gradients first, and return the loss. The reference is the step
    written with nbhelpers' fine_tuning_loss (checked against F.cross_entropy in the tests)
    and plain SGD (PlainSGD, checked against torch.optim.SGD in the tests) on a copy with
    the same stale gradients."""
    check_function("fn", fn)
    lr = 0.5
    ids = torch.tensor([[1, 3, 5, 6, 7, 4, 8], [1, 4, 5, 3, 8, 0, 0], [1, 3, 5, 7, 4, 6, 8]])
    labels = torch.tensor([1, 0, 1])
    cases = []
    for name, lam in ((tr("λ = 0.5, one padded example"), 0.5), (tr("λ = 0"), 0.0)):
        classifier = _classifier(41)

        def run(answer, lam=lam, classifier=classifier):
            mine = with_stale_gradients(classifier).train()
            optimizer = PlainSGD(mine.parameters(), lr=lr)
            loss = answer(mine, optimizer, ids.clone(), labels.clone(), lam, 0)
            got = (as_loss(loss), parameters_of(mine))

            def variant(**mistake):
                return _reference_step(classifier, ids, labels, lam, lr, **mistake)

            mistakes = [
                (tr("the old gradients were not cleared: optimizer.zero_grad() first"),
                 lambda: variant(zero=False)),
                (tr("the weights did not move: call optimizer.step() after backward"),
                 lambda: variant(step=False)),
                (tr("λ·L1 is missing: add λ times the language model's loss"),
                 (lambda: variant(lam_used=0.0)) if lam else None),
                (tr("λ is ignored: the language model's loss is weighted by λ, not by 1"),
                 lambda: variant(lam_used=1.0)),
                (tr("the step climbs the loss: minimise -L2/B - λ·L1/N, the negative of the "
                    "log-likelihoods"), lambda: variant(sign=-1.0)),
            ]  # fmt: skip
            return got, variant(), mistakes

        cases.append(
            Case(name, f"ids {tuple(ids.shape)}, labels {tuple(labels.shape)}, λ = {lam:g}", run,
                 atol=1e-5, derived=True,
                 parts=(tr("the loss returned"), tr("the weights after the step")))
        )  # fmt: skip
    return run_cases(
        "fine_tuning_step",
        fn,
        cases,
        tr("make one fine-tuning step and return its loss."),
    )


__all__ = ["check_fine_tuning_step", "check_l3", "check_similarity_inputs"]
