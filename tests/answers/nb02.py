"""Notebook 02_softmax: the usual mistakes in its exercises, each with the words
its report must show, and correct answers in other styles than the worked solution."""

from __future__ import annotations

import torch
import torch.nn.functional as F

from nbhelpers.exercises import check_log_softmax, check_softmax_backward

from . import Exercise, Says

NEG_INF = float("-inf")


def log_softmax(s, stable=True, via_softmax=False, dim=-1):
    if via_softmax:
        return torch.log(F.softmax(s, dim=dim))
    m = s.amax(dim, keepdim=True) if stable else torch.zeros_like(s.amax(dim, keepdim=True))
    return s - m - torch.log(torch.exp(s - m).sum(dim, keepdim=True))


def jacobian_built(a, g):
    J = torch.diag_embed(a) - a.unsqueeze(-1) * a.unsqueeze(-2)  # (..., m, m)
    return (J @ g.unsqueeze(-1)).squeeze(-1)


def through_autograd(a, g):
    s = torch.log(a).requires_grad_()
    return torch.autograd.grad(F.softmax(s, dim=-1), s, g)[0]


def g_changed_in_place(a, g):
    g -= (a * g).sum(-1, keepdim=True)  # the right numbers, but the caller's g is gone
    return a * g


EXERCISES = [
    Exercise(
        check_log_softmax,
        "my_log_softmax",
        mistakes=[
            (lambda s: log_softmax(s, via_softmax=True), "log of softmax underflows"),
            (lambda s: log_softmax(s, stable=False), "exp overflows without the maximum"),
            (lambda s: log_softmax(s, dim=0), "over the wrong axis"),
            (lambda s: F.softmax(s, dim=-1), "the softmax itself"),
            (
                lambda s: s - torch.log(torch.exp(s - s.amax(-1, True)).sum(-1, True)),
                "inside exp but not added back",
            ),
            # the built-ins the exercise asks the learner to write
            (lambda s: s - torch.logsumexp(s, -1, keepdim=True), "calls torch.logsumexp"),
            (lambda s: s - s.logsumexp(-1, keepdim=True), "calls Tensor.logsumexp"),
            (lambda s: F.log_softmax(s, dim=-1), "calls F.log_softmax"),
            (lambda s: s.log_softmax(-1), "calls Tensor.log_softmax"),
        ],
        other_styles=[
            lambda s: s - s.amax(-1, True) - torch.exp(s - s.amax(-1, True)).sum(-1, True).log(),
            lambda s: s - (m := s.amax(-1, True)) - torch.log(torch.exp(s - m).sum(-1, True)),
        ],
    ),
    Exercise(
        check_softmax_backward,
        "my_softmax_backward",
        mistakes=[
            (lambda a, g: a * g, "a ⊙ g alone"),
            (lambda a, g: g - (a * g).sum(-1, keepdim=True), "without the factor a"),
            (lambda a, g: a * ((a * g).sum(-1, keepdim=True) - g), "the sign is reversed"),
            (lambda a, g: a * (g - (a * g).sum(0, keepdim=True)), "runs over the wrong axis"),
            (lambda a, g: a * (1 - a) * g, "the Jacobian's diagonal alone"),
            # what the exercise forbids: the Jacobian itself, autograd; and a caller's g changed
            (jacobian_built, Says("per row: the Jacobian")),
            (through_autograd, "calls torch.autograd.grad"),
            (g_changed_in_place, Says("changed its argument g in place")),
        ],
        other_styles=[
            lambda a, g: torch.einsum("...i,...i->...i", a, g) - a * (a * g).sum(-1, keepdim=True)
        ],
    ),
]
