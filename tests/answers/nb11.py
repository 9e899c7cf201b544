"""Notebook 11_fine_tuning_gpt1: the usual mistakes in its exercises, each with the words
its report must show, and correct answers in other styles than the worked solution."""

from __future__ import annotations

from nbhelpers.exercises import check_fine_tuning_step, check_l3, check_similarity_inputs

from . import Exercise

NEG_INF = float("-inf")


def similarity(a, b, *, orders=2, start="<SOS>", end="<EXTRACT>", delim=True):
    def one(x, y):
        middle = [*x, "<DELIM>", *y] if delim else [*x, *y]
        return [t for t in (start, *middle, end) if t is not None]

    return [one(a, b), one(b, a)][:orders]


def l3_variant(class_logits, labels, lm_logits, ids, lam, pad_id, *, sign=1, swap=False,
               mean=False, pad=True, shift=True):  # fmt: skip
    L2 = class_logits.log_softmax(-1).gather(-1, labels[:, None]).squeeze(-1)
    logits, targets = (lm_logits[:, :-1], ids[:, 1:]) if shift else (lm_logits, ids)
    token = logits.log_softmax(-1).gather(-1, targets[..., None]).squeeze(-1)
    if pad:
        token = token[targets != pad_id]
    L2, L1 = (L2.mean(), token.mean()) if mean else (L2.sum(), token.sum())
    return sign * ((lam * L2 + L1) if swap else (L2 + lam * L1))


def fine_tuning_step(classifier, optimizer, ids, labels, lam, pad_id, *, zero=True, step=True,
                     weight=None, sign=1.0):  # fmt: skip
    from nbhelpers.fine_tuning import fine_tuning_loss

    if zero:
        optimizer.zero_grad()
    used = lam if weight is None else weight
    loss = sign * fine_tuning_loss(classifier, ids, labels, lam=used, pad_id=pad_id)
    loss.backward()
    if step:
        optimizer.step()
    return loss


def fine_tuning_step_written_out(classifier, optimizer, ids, labels, lam, pad_id):
    """The loss spelled out from the log-probabilities, not through fine_tuning_loss."""
    optimizer.zero_grad()
    class_logits, lm_logits = classifier(ids)
    L2 = class_logits.log_softmax(-1).gather(-1, labels[:, None]).sum()
    token = lm_logits[:, :-1].log_softmax(-1).gather(-1, ids[:, 1:, None]).squeeze(-1)
    kept = ids[:, 1:] != pad_id
    loss = -L2 / len(ids) - lam * token[kept].sum() / kept.sum()
    loss.backward()
    optimizer.step()
    return loss.item()


EXERCISES = [
    Exercise(
        check_similarity_inputs,
        "my_similarity_inputs",
        mistakes=[
            (lambda a, b: similarity(a, b, orders=1), "one order only"),
            (lambda a, b: similarity(a, b, start=None), "<SOS> start token is missing"),
            (lambda a, b: similarity(a, b, end=None), "<EXTRACT> token is missing"),
            (lambda a, b: similarity(a, b, end="<EOS>"), "<EOS> is not the extract token"),
            (lambda a, b: similarity(a, b, delim=False), "<DELIM> token between"),
        ],
        other_styles=[lambda a, b: (similarity(a, b)[0], similarity(a, b)[1])],
    ),
    Exercise(
        check_l3,
        "my_l3",
        mistakes=[
            (lambda *a: l3_variant(*a, sign=-1), "the sign"),
            (lambda *a: l3_variant(*a, swap=True), "λ multiplies L1"),
            (lambda *a: l3_variant(*a, mean=True), "means instead of sums"),
            (lambda *a: l3_variant(*a, pad=False), "<PAD> targets count"),
            (lambda *a: l3_variant(*a, shift=False), "not shifted"),
        ],
        other_styles=[lambda *a: l3_variant(*a)],
    ),
    Exercise(
        check_fine_tuning_step,
        "my_fine_tuning_step",
        mistakes=[
            (lambda *a: fine_tuning_step(*a, zero=False), "old gradients were not cleared"),
            (lambda *a: fine_tuning_step(*a, step=False), "did not move"),
            (lambda *a: fine_tuning_step(*a, weight=0.0), "λ·L1 is missing"),
            (lambda *a: fine_tuning_step(*a, weight=1.0), "λ is ignored"),
            (lambda *a: fine_tuning_step(*a, sign=-1.0), "the step climbs the loss"),
        ],
        other_styles=[fine_tuning_step_written_out],
    ),
]
