"""Checkers for notebook 08, training GPT-1: the objective L1, and one step in micro-batches."""

from __future__ import annotations

import torch
import torch.nn.functional as F

from ..support.language import N_, tr
from .core import *  # noqa: F403 (the checkers' toolkit: core.__all__)
from .gpt_cases import (
    SENTENCE,
    VOCAB,
    as_loss,
    parameters_of,
    small_model,
    with_stale_gradients,
)
from .references import (
    PlainSGD,
)


def accumulated_step(
    model,
    optimizer,
    ids,
    pad_id,
    micro_batch,
    *,
    shift=True,
    backwards=False,
    ignore=True,
    pads_in_count=False,
    weighting="tokens",
    zero="once",
    step="once",
) -> float:
    """The full batch's training step, made in micro-batches of `micro_batch` sentences and
    written with F.cross_entropy: what check_accumulated_step expects, and the capstone's own
    step. The keywords make the usual mistakes. Returns the loss reported."""

    def targets_of(chunk):
        if shift == "inputs":  # the inputs cut, the targets not shifted to match
            return chunk[:, :-1]
        if not shift:
            return chunk
        return chunk[:, :-1] if backwards else chunk[:, 1:]

    def pair(chunk):
        if shift == "inputs" or (shift and not backwards):
            return model(chunk[:, :-1]), targets_of(chunk)
        if not shift:
            return model(chunk), chunk
        return model(chunk)[:, 1:], targets_of(chunk)

    def counted(targets):
        return int((targets != pad_id).sum()) if ignore and not pads_in_count else targets.numel()

    chunks = ids.split(micro_batch)
    total = sum(counted(targets_of(chunk)) for chunk in chunks)
    if zero == "once":
        optimizer.zero_grad(set_to_none=True)
    reported = 0.0
    for chunk in chunks:
        if zero == "each":
            optimizer.zero_grad(set_to_none=True)
        logits, targets = pair(chunk)
        summed = F.cross_entropy(
            logits.flatten(0, 1),
            targets.flatten(),
            ignore_index=pad_id if ignore else -100,
            reduction="sum",
        )
        if weighting == "tokens":
            loss = summed / total
        elif weighting == "means":
            loss = summed / counted(targets) / len(chunks)
        else:
            loss = summed
        loss.backward()
        reported += float(loss.detach())
        if step == "each":
            optimizer.step()
    if step == "once":
        optimizer.step()
    return reported


def reference_step(model, ids, pad_id, lr, micro_batch, **mistake):
    """accumulated_step on a copy of `model` (its stale gradients included) with plain SGD.
    Returns (the loss reported, the parameters after)."""
    model = with_stale_gradients(model)
    optimizer = PlainSGD(model.parameters(), lr=lr)
    reported = accumulated_step(model, optimizer, ids, pad_id, micro_batch, **mistake)
    return torch.tensor(reported, dtype=torch.float64), parameters_of(model)


# The usual slips of an accumulated step: (hint, accumulated_step's keywords that make it,
# whether it shows only when the batch is cut into several micro-batches).
ACCUMULATION_MISTAKES = [
    (
        N_(
            "the loss is the mean of the micro-batches' means: they hold different numbers of "
            "tokens, so divide each micro-batch's summed loss by the whole batch's token count"
        ),
        {"weighting": "means"},
        True,
    ),
    (
        N_(
            "the targets are not shifted: the logits at position t must be compared with token "
            "t + 1 (model(ids[:, :-1]) against ids[:, 1:])"
        ),
        {"shift": False},
        False,
    ),
    (
        N_("shifted the wrong way: position t predicts token t + 1, not t - 1"),
        {"backwards": True},
        False,
    ),
    (
        N_("the <PAD> targets count: pass ignore_index=pad_id to F.cross_entropy"),
        {"ignore": False},
        False,
    ),
    (
        N_(
            "the <PAD> targets are left out of the sum but counted in N: divide by the number "
            "of targets that are not pad_id"
        ),
        {"pads_in_count": True},
        False,
    ),
    (
        N_(
            "the inputs were cut but the targets not shifted: the logits of "
            "model(ids[:, :-1]) are compared with ids[:, 1:], not ids[:, :-1]"
        ),
        {"shift": "inputs"},
        False,
    ),
    (
        N_("the loss is a sum: the mean over the predicted tokens is -L1 / N"),
        {"weighting": "sum"},
        False,
    ),
    (
        N_(
            "the old gradients were not cleared: call optimizer.zero_grad() once, before the "
            "first backward"
        ),
        {"zero": "none"},
        False,
    ),
    (
        N_(
            "zero_grad inside the loop: each micro-batch wipes the gradients of the ones before "
            "it; clear them once, before the loop"
        ),
        {"zero": "each"},
        True,
    ),
    (
        N_("a step per micro-batch: accumulate the gradients, then step once"),
        {"step": "each"},
        True,
    ),
    (
        N_("the weights did not move: call optimizer.step() after the loop"),
        {"step": "none"},
        False,
    ),
]


@leaves_state_alone
def check_accumulated_step(fn) -> CheckResult:
    """fn(model, optimizer, ids, pad_id, micro_batch) must make, in micro-batches of
    `micro_batch` sentences, exactly the training step that the whole batch ids (B, n) would
    make: position t predicts token t + 1, the loss is the mean cross-entropy over all the
    batch's targets that are not pad_id (-L1 / N), old gradients cleared once, one backward
    per micro-batch, one optimiser step at the end; it returns the batch's loss. The reference
    is the same step written with F.cross_entropy and plain SGD (PlainSGD, checked against
    torch.optim.SGD in the tests) on a copy of the same weights; both start from the same
    stale gradients, which a missing zero_grad would add in."""
    check_function("fn", fn)
    lr = 0.5  # plain SGD: the step shows the gradient's size, which Adam would hide
    two = torch.tensor([[1, 3, 5, 6, 7, 8, 2], [1, 4, 5, 8, 2, 0, 0]])
    four = torch.tensor(
        [[1, 3, 5, 8, 2, 0], [1, 4, 5, 8, 2, 0], [1, 3, 5, 6, 7, 8], [1, 4, 5, 2, 0, 0]]
    )
    cases = []
    for name, ids, micro in (
        (tr("two sentences, one padded, one at a time"), two, 1),
        (tr("four sentences in micro-batches of 2"), four, 2),
        (tr("the whole batch at once"), two, 2),
    ):
        model = small_model(18, n_layers=1, std=0.3)

        def run(answer, ids=ids, micro=micro, model=model):
            mine = with_stale_gradients(model).train()
            seen = []
            mine.register_forward_pre_hook(lambda module, args: seen.append(len(args[0])))
            optimizer = PlainSGD(mine.parameters(), lr=lr)
            loss = answer(mine, optimizer, ids.clone(), 0, micro)
            if seen and max(seen) > micro:
                raise Rejected(
                    tr(
                        "the model was called on {seen} sentences at once, with micro_batch = "
                        "{micro}",
                        seen=max(seen),
                        micro=micro,
                    ),
                    tr("cut ids into micro-batches, ids.split(micro_batch), and run each alone"),
                )
            got = (as_loss(loss), parameters_of(mine))
            split = micro < len(ids)

            def variant(**mistake):
                return reference_step(model, ids, 0, lr, micro, **mistake)

            mistakes = [
                (tr(hint), (lambda kw=kw: variant(**kw)) if split or not needs_split else None)
                for hint, kw, needs_split in ACCUMULATION_MISTAKES
            ]
            return got, variant(), mistakes

        inputs = shapes(ids=ids) + f", pad_id = 0, micro_batch = {micro}"
        cases.append(
            Case(
                name, inputs, run, derived=True, atol=1e-5,
                parts=(tr("the loss returned"), tr("the weights after the step")),
            )
        )  # fmt: skip
    return run_cases(
        "accumulated_step",
        fn,
        cases,
        tr("one step of the whole batch, made in micro-batches; return the loss."),
    )


def picked(table: torch.Tensor, ids: torch.Tensor) -> torch.Tensor:
    """table[..., t, ids[..., t]] for every position t: (..., n, V), (..., n) -> (..., n)."""
    return table.gather(-1, ids.unsqueeze(-1)).squeeze(-1)


@leaves_state_alone
def check_log_likelihood(fn) -> CheckResult:
    """fn(logits, ids) must give L1 = Σ_t log P(u_{t+1} | u_<=t) of shape (...): logits
    (..., n, n_vocab) from model(ids) and ids (..., n). A sum over the predicted positions, not a
    mean, not its negative."""
    check_function("fn", fn)
    g = seeded(14)
    cases = []
    for name, shape, V, scale in (
        ("<SOS> 犬 が 河岸 を 歩く", (6,), len(VOCAB), 2.0),
        (tr("a batch of 4"), (4, 7), 11, 2.0),
        (tr("two batch dims"), (2, 3, 5), 8, 2.0),
        (tr("a batch of one"), (1, 6), 9, 2.0),  # keeps its batch axis: (1,), not ()
        (tr("confident logits, scale 100"), (2, 5), 9, 100.0),  # softmax underflows to 0
    ):
        ids = SENTENCE if shape == (6,) else torch.randint(0, V, shape, generator=g)
        logits = randn(g, *shape, V, scale=scale)
        per_token = -F.cross_entropy(
            logits[..., :-1, :].reshape(-1, V), ids[..., 1:].reshape(-1), reduction="none"
        ).reshape(ids[..., 1:].shape)
        unshifted = picked(F.log_softmax(logits, dim=-1), ids)
        probs = F.softmax(logits[..., :-1, :], -1)
        cases.append(
            Case(
                name,
                shapes(logits=logits, ids=ids),
                lambda f, logits=logits, ids=ids: f(logits, ids),
                per_token.sum(-1),
                mistakes=[
                    (
                        tr("a mean where the objective is a sum over the predicted positions"),
                        per_token.mean(-1),
                    ),
                    (
                        tr("this is the loss, -L1: L1 itself is a sum of log-probabilities (≤ 0)"),
                        -per_token.sum(-1),
                    ),
                    (
                        tr(
                            "off by one: position t predicts token t + 1, so compare "
                            "logits[..., :-1] with ids[..., 1:]"
                        ),
                        unshifted.sum(-1),
                    ),
                    (
                        tr(
                            "the last position predicts nothing here: drop logits[..., -1] "
                            "and score ids[..., 1:]"
                        ),
                        unshifted[..., 1:].sum(-1),
                    ),
                    (
                        tr("the batch axis was squeezed away: a batch of one keeps it, (1,)"),
                        per_token.sum(-1).squeeze(),
                    ),
                    (
                        tr(
                            "the log of softmax: for confident logits softmax rounds to 0 and "
                            "its log is -inf; log_softmax computes the log directly"
                        ),
                        picked(probs, ids[..., 1:]).log().sum(-1),
                    ),
                    (
                        tr("log_softmax over the wrong axis: over the vocabulary, dim=-1"),
                        picked(F.log_softmax(logits[..., :-1, :], -2), ids[..., 1:]).sum(-1),
                    ),
                    (
                        tr(
                            "the shift runs the wrong way: logits[..., :-1] predict ids[..., 1:], "
                            "not logits[..., 1:] against ids[..., :-1]"
                        ),
                        picked(F.log_softmax(logits[..., 1:, :], -1), ids[..., :-1]).sum(-1),
                    ),
                    (
                        tr("probabilities, not log-probabilities: take the log (log_softmax)"),
                        picked(probs, ids[..., 1:]).sum(-1),
                    ),
                ],
            )
        )
    return run_cases(
        "log_likelihood",
        fn,
        cases,
        tr("return L1 for each sequence."),
    )
