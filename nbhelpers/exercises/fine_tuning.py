"""Checkers for notebook 11's capstone, the learner's own fine-tuning: the classifier head (the
<EXTRACT> gather, the similarity sum, the multiple-choice softmax), the loss of L3 = L2 + λ·L1,
and the fine-tuning loop. fine_tuning_capstone.py plugs the three into the course model."""

from __future__ import annotations

import copy

import torch
import torch.nn.functional as F
from torch import nn

from ..fine_tuning import KINDS, extract_states
from ..support.language import tr
from .core import *  # noqa: F403 (the checkers' toolkit: core.__all__)
from .gpt_cases import as_loss, parameters_of, small_model

PAD_ID = 0
EXTRACT_ID = 8  # in the checkers' 9-token vocabulary, token 8 serves as <EXTRACT>


class TaskHead(nn.Module):
    """nbhelpers' own head: log P(y | x¹..xᵐ) from the last block's states h (B, [m,] n, d).

    * "classification": log softmax(h_L^m W_y) over the n_classes, (B, n_classes);
    * "similarity": the two orders' h_L^m added, then the same, (B, n_classes);
    * "multiple choice": one score h_L^m W_y per answer (W_y has 1 output), log softmax over
      the k answers, (B, k).
    """

    def __init__(self, d_model: int, kind: str, n_classes: int = 2):
        super().__init__()
        self.kind = kind
        self.W_y = nn.Linear(d_model, 1 if kind == "multiple choice" else n_classes, bias=False)

    def forward(self, h: torch.Tensor, ids: torch.Tensor, extract_id: int) -> torch.Tensor:
        return head_log_probs(self.W_y, self.kind, h, ids, extract_id)


def head_log_probs(W_y, kind, h, ids, extract_id, *, at=None, orders="sum", over=-1, out="log"):
    """TaskHead's formula with W_y given; the keywords make the usual mistakes: `at` an index
    read in place of <EXTRACT>'s position ("before": the token before it), `orders` "first"
    or "mean" for similarity, `over` the dimension of the softmax, `out` "scores" (no
    softmax) or "probabilities" (no log) in place of "log"."""
    if at is None:
        h_m = extract_states(h, ids, extract_id)  # (B, [m,] d)
    elif at == "before":
        before = (ids == extract_id).roll(-1, dims=-1)  # (B, [m,] n): just before <EXTRACT>
        h_m = (h * before.unsqueeze(-1)).sum(-2)  # (B, [m,] d): the one row picked
    else:
        h_m = h[..., at, :]
    if kind == "similarity":
        h_m = {"sum": h_m.sum(1), "mean": h_m.mean(1), "first": h_m[:, 0]}[orders]
    scores = W_y(h_m)  # (B, n_classes), or (B, k, 1)
    if kind == "multiple choice":
        scores = scores.squeeze(-1)  # (B, k): one score per answer
    if out == "scores":
        return scores
    return scores.log_softmax(over) if out == "log" else scores.softmax(over)


def kind_name(kind: str) -> str:
    return {
        "classification": tr("classification"),
        "similarity": tr("similarity"),
        "multiple choice": tr("multiple choice"),
    }[kind]


def _extract_ids(g, shape, lengths):
    """Right-padded ids (shape (..., n)) whose <EXTRACT> ends each sequence at `lengths`."""
    ids = torch.randint(1, EXTRACT_ID, shape, generator=g)
    flat = ids.view(-1, shape[-1])
    for row, length in zip(flat, lengths, strict=True):
        row[length - 1] = EXTRACT_ID
        row[length:] = PAD_ID
    return ids


@leaves_state_alone
def check_task_head(cls) -> CheckResult:
    """cls(d_model, kind, n_classes=2) is an nn.Module with an nn.Linear W_y (no bias), whose
    forward(h, ids, extract_id) returns log P(y | x): the states at <EXTRACT> (a different
    position in each right-padded sequence), for "similarity" the two orders' states added,
    W_y, and a log softmax over the classes, or for "multiple choice" over the k answers
    (W_y with one output). The reference is TaskHead's formula on the answer's own W_y, its
    gather written with extract_states (checked against indexing in the tests)."""
    check_class("cls", cls)
    d = 6
    cases = []
    layouts = (
        ("classification", (3, 7), [7, 4, 5]),
        ("similarity", (2, 2, 7), [7, 5, 4, 6]),
        ("multiple choice", (2, 4, 7), [7, 5, 6, 4, 5, 7, 6, 3]),
        ("classification", (1, 7), [5]),  # a batch of one keeps its batch axis
    )
    for kind, shape, lengths in layouts:
        g = seeded(50 + len(cases))
        h = randn(g, *shape, d)
        ids = _extract_ids(g, shape, lengths)

        def run(answer, kind=kind, h=h, ids=ids):
            head = build(answer, d, kind)
            (W_y,) = linear_weights(head, "W_y").values()
            if W_y.bias is not None:
                raise Rejected(
                    tr("W_y has a bias"),
                    tr("P(y | x) = softmax(h_L^m W_y) has none: nn.Linear(..., bias=False)"),
                )
            outputs = 1 if kind == "multiple choice" else 2
            if W_y.weight.shape != (outputs, d):
                raise Rejected(
                    tr("W_y has shape {got}, expected {expected}",
                       got=tuple(W_y.weight.shape), expected=(outputs, d)),
                    tr("multiple choice scores each answer with one number: W_y has 1 output")
                    if kind == "multiple choice"
                    else tr("W_y maps the d_model-wide state to the n_classes scores"),
                )  # fmt: skip
            with torch.no_grad():
                got = head(h.clone(), ids.clone(), EXTRACT_ID)
                expected = head_log_probs(W_y, kind, h, ids, EXTRACT_ID)

                def variant(**mistake):
                    return lambda: head_log_probs(W_y, kind, h, ids, EXTRACT_ID, **mistake)

                mistakes = [
                    (tr("the last position is read: in a right-padded batch it is <PAD> for the "
                        "shorter sequences; find <EXTRACT> in ids"), variant(at=-1)),
                    (tr("the first position is read, the start token: read the state at "
                        "<EXTRACT>, where the whole sequence has been seen"), variant(at=0)),
                    (tr("no log softmax: return log P(y | x), not the scores"),
                     variant(out="scores")),
                    (tr("probabilities, not their logarithms: return log P(y | x), with "
                        "log_softmax"), variant(out="probabilities")),
                    (tr("the token before <EXTRACT> is read: h_L^m is the state at <EXTRACT> "
                        "itself, the last token the model reads"), variant(at="before")),
                    (tr("the softmax runs over the batch: it runs over each example's classes, "
                        "or for multiple choice over its k answers"), variant(over=0)),
                    (tr("the batch axis was squeezed away: a batch of one keeps it, "
                        "(1, n_classes)"), lambda: expected[0]),
                ]  # fmt: skip
                if kind == "similarity":
                    mistakes += [
                        (tr("one order only: add the two orders' states, h_L^m of a-b plus "
                            "h_L^m of b-a"), variant(orders="first")),
                        (tr("the two orders are averaged: GPT-1 adds them"),
                         variant(orders="mean")),
                    ]  # fmt: skip
            return got, expected, mistakes

        cases.append(
            Case(kind_name(kind) if shape[0] > 1 else tr("a batch of one"),
                 f"h {tuple(h.shape)}, ids {tuple(ids.shape)}", run, atol=1e-5,
                 derived=True)
        )  # fmt: skip
    return run_cases(
        "TaskHead", cls, cases, tr("write the classifier head that reads h_L^m at <EXTRACT>.")
    )


def reference_loss(log_p, labels, lm_logits, ids, lam, pad_id, *, swap=False, sign=1.0,
                   means=True, pad=True, shift=True, aux=True, mask="targets",
                   axis1=False):  # fmt: skip
    """-L2/B - λ·L1/N, written with F.nll_loss and F.cross_entropy; the keywords make the
    usual mistakes (`mask` "inputs": the positions whose input is <PAD> left out, not those
    whose target is; "per sequence": L1 averaged over each sequence, then over them)."""
    logits, targets = (lm_logits[..., :-1, :], ids[..., 1:]) if shift else (lm_logits, ids)
    if axis1:  # the shift written for (B, n) on axis 1, whatever the leading dimensions
        logits, targets = lm_logits[:, :-1], ids[:, 1:]
    reduction = "mean" if means else "sum"
    L2_term = F.nll_loss(log_p, labels, reduction=reduction)  # -L2 / B
    if mask != "targets":
        token = -logits.log_softmax(-1).gather(-1, targets.unsqueeze(-1)).squeeze(-1)
        kept = (ids[..., :-1] if mask == "inputs" else targets) != pad_id
        if mask == "inputs":
            L1_term = token[kept].mean()
        else:  # per sequence: GPT-1's code
            L1_term = ((token * kept).sum(-1) / kept.sum(-1)).mean()
        return sign * (L2_term + lam * L1_term)
    ignored = pad_id if pad else -100  # -100: no target is ignored
    L1_term = F.cross_entropy(
        logits.flatten(0, -2), targets.flatten(), ignore_index=ignored, reduction=reduction
    )
    if not aux:
        return sign * L2_term
    return sign * (lam * L2_term + L1_term if swap else L2_term + lam * L1_term)


@leaves_state_alone
def check_fine_tuning_loss(fn) -> CheckResult:
    """fn(log_p, labels, lm_logits, ids, lam, pad_id) -> the loss to minimise,
    -L2/B - λ·L1/N: L2 = Σ log P(y | x) over the B examples, L1 = Σ log P(u_i | u_<i) over the
    N targets that are not pad_id (position t predicts token t + 1), ids of any number of
    leading dimensions. The reference is written with F.nll_loss and F.cross_entropy."""
    check_function("fn", fn)
    untrainable = tr(
        "return the loss as a tensor that carries the gradient: not a Python float, not "
        "detached (.item(), float(), .detach()), since the loop calls backward() on it"
    )

    def trainable(loss):
        if not isinstance(loss, torch.Tensor) or not loss.requires_grad:
            raise Rejected(tr("the loss carries no gradient"), untrainable)
        return loss

    g = seeded(61)
    cases = []
    for name, lead, n_answers, lam in (
        (tr("classification, λ = 0.5"), (4,), 2, 0.5),
        (tr("multiple choice, 3 answers each, λ = 0.5"), (2, 3), 3, 0.5),
        (tr("λ = 0: the loss is -L2 / B"), (3,), 2, 0.0),
    ):
        V, n = 9, 6
        # leaves that require grad, as the head's and the model's outputs do in training
        log_p = randn(g, lead[0], n_answers, scale=2.0).log_softmax(-1).requires_grad_()
        labels = torch.randint(0, n_answers, (lead[0],), generator=g)
        lm_logits = randn(g, *lead, n, V, scale=2.0).requires_grad_()
        ids = torch.randint(1, V, (*lead, n), generator=g)
        ids.view(-1, n)[0, -2:] = PAD_ID  # a padded sequence
        args = (log_p, labels, lm_logits, ids, lam, PAD_ID)
        expected = reference_loss(*args).detach().double()

        def variant(args=args, **mistake):
            return lambda: reference_loss(*args, **mistake).detach().double()

        mistakes = [
            (tr("the sign: the loss is the negative of the log-likelihoods"), variant(sign=-1.0)),
            (tr("λ multiplies L1, the language model's term, not L2"),
             variant(swap=True) if lam else None),
            (tr("sums instead of means: -L2 / B and -L1 / N are each averaged"),
             variant(means=False)),
            (tr("the <PAD> targets count: leave out the targets equal to pad_id"),
             variant(pad=False) if lam else None),
            (tr("the targets are not shifted: position t predicts token t + 1"),
             variant(shift=False) if lam else None),
            (tr("the shift is on axis 1: with several answers per example ids is (B, k, n); "
                "shift the last axis, ids[..., 1:]"),
             variant(axis1=True) if lam and len(lead) > 1 else None),
            (tr("λ·L1 is missing: add λ times the language model's loss"),
             variant(aux=False) if lam else None),
            (tr("the positions whose input is <PAD> are left out, not those whose target is: "
                "the position of <EXTRACT> then learns to predict <PAD>"),
             variant(mask="inputs") if lam else None),
            (tr("L1 is averaged over each sequence, then over the sequences (as GPT-1's code "
                "does): here each of the N tokens counts once, -L1/N"),
             variant(mask="per sequence") if lam else None),
        ]  # fmt: skip
        cases.append(
            Case(name, f"log_p {tuple(log_p.shape)}, ids {tuple(ids.shape)}, λ = {lam:g}",
                 lambda f, a=args: as_loss(trainable(f(*a))), expected, atol=1e-5,
                 mistakes=mistakes)
        )  # fmt: skip
    task = tr("return the fine-tuning loss of L3, a number to minimise.")
    return run_cases("fine_tuning_loss", fn, cases, task)


def reference_loop(gpt, head, loss_fn, batches, lam, lr, pad_id, *, optimiser_first=False,
                   train=("gpt", "head"), zero=True, read=1, optimiser="Adam"):  # fmt: skip
    """nbhelpers' own loop: add <DELIM> and <EXTRACT> to W_e, Adam over the model's and the
    head's parameters, then one step per batch on loss_fn; returns the losses. The keywords
    make the usual mistakes."""
    if optimiser_first:
        parameters = [*gpt.parameters(), *head.parameters()]
    extract_id = gpt.add_tokens(2)[read]  # [<DELIM>'s id, <EXTRACT>'s id]
    if not optimiser_first:
        parameters = [*(gpt.parameters() if "gpt" in train else ()),
                      *(head.parameters() if "head" in train else ())]  # fmt: skip
    optimizer = getattr(torch.optim, optimiser)(parameters, lr=lr)
    losses = []
    for ids, labels in batches:
        h = gpt.hidden_states(ids)
        loss = loss_fn(head(h, ids, extract_id), labels, gpt.logits(h), ids, lam, pad_id)
        if zero:
            optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(float(loss.detach()))
    return losses


def _loop_batches(g, steps):
    """Batches of right-padded ids (3, 7) over the 9-token vocabulary plus <DELIM> (9) and
    <EXTRACT> (10), the two rows the loop adds, with labels."""
    out = []
    for _ in range(steps):
        ids = torch.randint(1, 8, (3, 7), generator=g)
        for row, length in zip(ids, (7, 5, 6), strict=True):
            row[2], row[length - 1], row[length:] = 9, 10, PAD_ID
        out.append((ids, torch.randint(0, 2, (3,), generator=g)))
    return out


def same_new_rows(gpt) -> None:
    """Make gpt.add_tokens draw the same new rows whatever generator it is given: the loop is
    judged on its steps, not on the draw (notebook 11 draws with its own generator)."""
    add_tokens = gpt.add_tokens

    def drawn_alike(count, *, generator=None):
        return add_tokens(count, generator=torch.Generator().manual_seed(0))

    gpt.add_tokens = drawn_alike


@leaves_state_alone
def check_fine_tuning_loop(fn) -> CheckResult:
    """fn(gpt, head, loss_fn, batches, lam, lr, pad_id) must add the two task tokens to the
    pre-trained gpt (gpt.add_tokens(2): the batches use their ids), build Adam over every
    weight of gpt and head, and make one step per (ids, labels) of batches on
    loss_fn(head(h, ids, extract_id), labels, gpt.logits(h), ids, lam, pad_id), clearing the
    gradients each time. The reference is nbhelpers' own loop on a copy with the same seed;
    the weights after the loop are compared."""
    check_function("fn", fn)
    cases = []
    for name, lam, steps in ((tr("3 batches, λ = 0.5"), 0.5, 3), (tr("2 batches, λ = 0"), 0.0, 2)):
        g = seeded(70 + steps)
        batches = _loop_batches(g, steps)
        # float64: Adam divides each gradient by its own size, so in float32 the rounding of a
        # gradient near 0 (a correct answer that computes it in another order) moves a weight
        # by up to lr / 10; in float64 by far less than the tolerance
        gpt, head = small_model(71, n_layers=1).double(), TaskHead(16, "classification").double()
        randomise_constants(head, g)

        def run(answer, lam=lam, batches=batches, gpt=gpt, head=head):
            def outcome(loop, **mistake):
                mine_gpt, mine_head = copy.deepcopy(gpt).train(), copy.deepcopy(head)
                same_new_rows(mine_gpt)
                loop(mine_gpt, mine_head, reference_loss, [(i.clone(), y.clone())
                     for i, y in batches], lam, 1e-2, PAD_ID, **mistake)  # fmt: skip
                return parameters_of(mine_gpt).double(), parameters_of(mine_head).double()

            got = outcome(answer)

            def variant(**mistake):
                return lambda: outcome(reference_loop, **mistake)

            mistakes = [
                (tr("W_e is not trained: the optimiser was built before gpt.add_tokens(2), "
                    "which replaces W_e (and the output layer tied to it); build it after"),
                 variant(optimiser_first=True)),
                (tr("only the head is trained: GPT-1 fine-tunes every weight of the model too"),
                 variant(train=("head",))),
                (tr("W_y is not trained: give the optimiser the head's parameters too"),
                 variant(train=("gpt",))),
                (tr("the old gradients were not cleared: optimizer.zero_grad() each step"),
                 variant(zero=False)),
                (tr("the head reads <DELIM>: gpt.add_tokens(2) returns the ids of <DELIM> and "
                    "<EXTRACT>, in that order"), variant(read=0)),
                (tr("AdamW decays every weight towards 0 each step: the exercise asks for "
                    "torch.optim.Adam"), variant(optimiser="AdamW")),
            ]  # fmt: skip
            return got, outcome(reference_loop), mistakes

        cases.append(
            Case(name, tr("{steps} batches of ids (3, 7), lr 1e-2", steps=steps), run,
                 atol=1e-4, derived=True,
                 parts=(tr("the model's weights after the loop"),
                        tr("the head's weights after the loop")))
        )  # fmt: skip
    task = tr("write the fine-tuning loop: new tokens, Adam, one step per batch.")
    return run_cases("fine_tuning_loop", fn, cases, task)


__all__ = ["KINDS", "TaskHead", "check_fine_tuning_loop", "check_fine_tuning_loss",
           "check_task_head", "reference_loop", "reference_loss"]  # fmt: skip
