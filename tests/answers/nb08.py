"""Notebook 08_training_gpt1: the usual mistakes in its exercises, each with the words
its report must show, and correct answers in other styles than the worked solution."""

from __future__ import annotations

import torch.nn.functional as F

from nbhelpers.exercises import check_accumulated_step, check_log_likelihood

from . import Exercise

NEG_INF = float("-inf")


def log_probs_at(logits, ids):
    return F.log_softmax(logits, -1).gather(-1, ids.unsqueeze(-1)).squeeze(-1)


def accumulated(
    shift=True, ignore=True, weighting="tokens", zero="once", step="once", split=True,
    pads_in_count=False,
):  # fmt: skip
    def one_step(model, optimizer, ids, pad_id, micro_batch):
        chunks = ids.split(micro_batch) if split else [ids]
        pairs = [
            {True: (c[:, :-1], c[:, 1:]), False: (c, c), "inputs": (c[:, :-1], c[:, :-1])}[shift]
            for c in chunks
        ]
        total = sum(
            int((t != pad_id).sum()) if ignore and not pads_in_count else t.numel()
            for _, t in pairs
        )
        if zero == "once":
            optimizer.zero_grad()
        reported = 0.0
        for inputs, targets in pairs:
            if zero == "each":
                optimizer.zero_grad()
            summed = F.cross_entropy(
                model(inputs).flatten(0, 1),
                targets.flatten(),
                ignore_index=pad_id if ignore else -100,
                reduction="sum",
            )
            count = int((targets != pad_id).sum())
            loss = {
                "tokens": summed / total,
                "means": summed / count / len(pairs),
                "sum": summed,
            }[weighting]
            loss.backward()
            reported += loss.item()
            if step == "each":
                optimizer.step()
        if step == "once":
            optimizer.step()
        return reported

    return one_step


def accumulated_with_means(model, optimizer, ids, pad_id, micro_batch):
    """Each micro-batch's mean, weighted by its share of the batch's tokens."""
    N = int((ids[:, 1:] != pad_id).sum())
    optimizer.zero_grad()
    total = 0.0
    for chunk in ids.split(micro_batch):
        count = int((chunk[:, 1:] != pad_id).sum())
        mean = F.cross_entropy(
            model(chunk[:, :-1]).transpose(1, 2), chunk[:, 1:], ignore_index=pad_id
        )
        (mean * count / N).backward()
        total += float(mean.detach()) * count / N
    optimizer.step()
    return total


EXERCISES = [
    Exercise(
        check_log_likelihood,
        "my_log_likelihood",
        mistakes=[
            (lambda lg, ids: log_probs_at(lg[..., :-1, :], ids[..., 1:]).mean(-1), "a mean"),
            (
                lambda lg, ids: -log_probs_at(lg[..., :-1, :], ids[..., 1:]).sum(-1),
                "this is the loss",
            ),
            (lambda lg, ids: log_probs_at(lg, ids).sum(-1), "off by one"),
            (lambda lg, ids: log_probs_at(lg, ids)[..., 1:].sum(-1), "the last position predicts"),
            (
                lambda lg, ids: log_probs_at(lg[..., :-1, :], ids[..., 1:]).sum(-1).squeeze(),
                "the batch axis was squeezed away",
            ),
            (
                lambda lg, ids: (
                    F.softmax(lg[..., :-1, :], -1)
                    .gather(-1, ids[..., 1:, None])
                    .squeeze(-1)
                    .sum(-1)
                ),
                "probabilities, not log-probabilities",
            ),
            (
                lambda lg, ids: (
                    F.softmax(lg[..., :-1, :], -1).log().gather(-1, ids[..., 1:, None]).squeeze(-1)
                ).sum(-1),
                "the log of softmax",
            ),
            (
                lambda lg, ids: (
                    F.log_softmax(lg[..., :-1, :], -2).gather(-1, ids[..., 1:, None]).squeeze(-1)
                ).sum(-1),
                "log_softmax over the wrong axis",
            ),
            (
                lambda lg, ids: log_probs_at(lg[..., 1:, :], ids[..., :-1]).sum(-1),
                "the shift runs the wrong way",
            ),
        ],
        other_styles=[],
    ),
    Exercise(
        check_accumulated_step,
        "my_accumulated_step",
        mistakes=[
            (accumulated(weighting="means"), "the mean of the micro-batches' means"),
            (accumulated(shift=False), "the targets are not shifted"),
            (accumulated(ignore=False), "the <PAD> targets count"),
            (accumulated(pads_in_count=True), "left out of the sum but counted in N"),
            (accumulated(shift="inputs"), "the inputs were cut but the targets not shifted"),
            (accumulated(weighting="sum"), "the loss is a sum"),
            (accumulated(zero="none"), "the old gradients were not cleared"),
            (accumulated(zero="each"), "zero_grad inside the loop"),
            (accumulated(step="each"), "a step per micro-batch"),
            (accumulated(step="none"), "the weights did not move"),
            (accumulated(split=False), "ids.split(micro_batch)"),
            (lambda *a: (accumulated()(*a), None)[1], "return the loss of the whole batch"),
        ],
        other_styles=[accumulated_with_means],
    ),
]
