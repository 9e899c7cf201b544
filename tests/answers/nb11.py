"""Notebook 11_fine_tuning_gpt1: the usual mistakes in its capstone's three parts, each with
the words its report must show, and correct answers in other styles than the worked
solution."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from nbhelpers.exercises import check_fine_tuning_loop, check_fine_tuning_loss, check_task_head
from nbhelpers.exercises.fine_tuning import reference_loss

from . import Exercise


def head_class(*, read="extract", orders="sum", over=-1, log=True, mc_outputs=1, probs=False,
               bias=False, squeeze=False):  # fmt: skip
    """A classifier head with one of the usual mistakes (the defaults: none)."""

    class Head(nn.Module):
        def __init__(self, d_model, kind, n_classes=2):
            super().__init__()
            self.kind = kind
            outputs = mc_outputs if kind == "multiple choice" else n_classes
            self.W_y = nn.Linear(d_model, outputs, bias=bias)

        def forward(self, h, ids, extract_id):
            if read == "extract":
                h_m = h[ids == extract_id].view(*ids.shape[:-1], h.shape[-1])
            elif read == "before":
                before = (ids == extract_id).long().argmax(-1) - 1
                index = before[..., None, None].expand(*before.shape, 1, h.shape[-1])
                h_m = h.gather(-2, index).squeeze(-2)
            else:
                h_m = h[..., {"last": -1, "first": 0}[read], :]
            if self.kind == "similarity":
                h_m = {"sum": h_m.sum(1), "mean": h_m.mean(1), "first": h_m[:, 0]}[orders]
            scores = self.W_y(h_m)
            if self.kind == "multiple choice":
                scores = scores.squeeze(-1)
            if probs:
                return torch.softmax(scores, over)
            out = torch.log_softmax(scores, over) if log else scores
            return out.squeeze() if squeeze else out

    return Head


def shift_on_axis_1(log_p, labels, lm_logits, ids, lam, pad_id):
    """Notebook 11's shift for (B, n), copied to ids of shape (B, k, n)."""
    logits, targets = lm_logits[:, :-1], ids[:, 1:]
    lm = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1),
                         ignore_index=pad_id)  # fmt: skip
    return F.nll_loss(log_p, labels) + lam * lm


def per_sequence_loss(log_p, labels, lm_logits, ids, lam, pad_id):
    """GPT-1's code: each sequence's mean token loss, then their mean."""
    L2 = -log_p[torch.arange(len(labels)), labels].mean()
    log_q = lm_logits[..., :-1, :].log_softmax(-1)
    targets = ids[..., 1:]
    token = -log_q.gather(-1, targets[..., None]).squeeze(-1)
    kept = (targets != pad_id).float()
    return L2 + lam * ((token * kept).sum(-1) / kept.sum(-1)).mean()


def loss_written_with_cross_entropy(log_p, labels, lm_logits, ids, lam, pad_id):
    lm = lm_logits[..., :-1, :].reshape(-1, lm_logits.shape[-1])
    return -log_p[torch.arange(len(labels)), labels].mean() + lam * F.cross_entropy(
        lm, ids[..., 1:].reshape(-1), ignore_index=pad_id
    )


def loop(gpt, head, loss_fn, batches, lam, lr, pad_id, *, early=False, only=None, zero=True,
         delim=False, adamw=False):  # fmt: skip
    if early:
        optimizer = torch.optim.Adam([*gpt.parameters(), *head.parameters()], lr=lr)
    delim_id, extract_id = gpt.add_tokens(2)
    if delim:
        extract_id = delim_id
    if not early:
        parameters = {"gpt": list(gpt.parameters()), "head": list(head.parameters())}
        chosen = parameters[only] if only else [*parameters["gpt"], *parameters["head"]]
        optimizer = (torch.optim.AdamW if adamw else torch.optim.Adam)(chosen, lr=lr)
    for ids, labels in batches:
        h = gpt.hidden_states(ids)
        loss = loss_fn(head(h, ids, extract_id), labels, gpt.logits(h), ids, lam, pad_id)
        if zero:
            optimizer.zero_grad()
        loss.backward()
        optimizer.step()


def loop_with_two_passes(gpt, head, loss_fn, batches, lam, lr, pad_id):
    """The logits from a second call, gpt(ids), rather than from the same h."""
    extract_id = gpt.add_tokens(2)[1]
    optimizer = torch.optim.Adam(list(gpt.parameters()) + list(head.parameters()), lr=lr)
    for ids, labels in batches:
        optimizer.zero_grad()
        log_p = head(gpt.hidden_states(ids), ids, extract_id)
        loss_fn(log_p, labels, gpt(ids), ids, lam, pad_id).backward()
        optimizer.step()


EXERCISES = [
    Exercise(
        check_task_head,
        "MyTaskHead",
        mistakes=[
            (head_class(read="last"), "the last position is read"),
            (head_class(read="first"), "the first position is read"),
            (head_class(log=False), "no log softmax"),
            (head_class(orders="first"), "one order only"),
            (head_class(orders="mean"), "the two orders are averaged"),
            (head_class(squeeze=True), "the batch axis was squeezed away"),
            (head_class(over=0), "the softmax runs over the batch"),
            (head_class(mc_outputs=2), "scores each answer with one number"),
            (head_class(read="before"), "the token before <EXTRACT> is read"),
            (head_class(probs=True), "probabilities, not their logarithms"),
            (head_class(bias=True), "bias=False"),
        ],
        other_styles=[head_class()],
    ),
    Exercise(
        check_fine_tuning_loss,
        "my_fine_tuning_loss",
        mistakes=[
            (lambda *a: reference_loss(*a, sign=-1.0), "the sign"),
            (lambda *a: reference_loss(*a, swap=True), "λ multiplies L1"),
            (lambda *a: reference_loss(*a, means=False), "sums instead of means"),
            (lambda *a: reference_loss(*a, pad=False), "<PAD> targets count"),
            (lambda *a: reference_loss(*a, shift=False), "not shifted"),
            (lambda *a: reference_loss(*a, aux=False), "λ·L1 is missing"),
            (shift_on_axis_1, "the shift is on axis 1"),
            (lambda *a: reference_loss(*a, mask="inputs"), "whose input is <PAD> are left out"),
            (per_sequence_loss, "averaged over each sequence"),
            (lambda *a: reference_loss(*a).detach().item(), "not a Python float"),
            (lambda *a: reference_loss(*a).detach(), "not a Python float, not detached"),
        ],
        other_styles=[loss_written_with_cross_entropy],
    ),
    Exercise(
        check_fine_tuning_loop,
        "my_fine_tuning_loop",
        mistakes=[
            (lambda *a: loop(*a, early=True), "the optimiser was built before gpt.add_tokens"),
            (lambda *a: loop(*a, only="head"), "only the head is trained"),
            (lambda *a: loop(*a, only="gpt"), "W_y is not trained"),
            (lambda *a: loop(*a, zero=False), "old gradients were not cleared"),
            (lambda *a: loop(*a, delim=True), "the head reads <DELIM>"),
            (lambda *a: loop(*a, adamw=True), "AdamW decays every weight"),
        ],
        other_styles=[loop_with_two_passes],
    ),
]
