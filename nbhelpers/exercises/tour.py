"""The tour's demonstration checker (notebook 00), on a function no later notebook asks for:
scale each row of a matrix of positive numbers so that it sums to 1."""

from __future__ import annotations

import torch

from ..support.language import N_, tr
from .core import *  # noqa: F403 (the checkers' toolkit: core.__all__)


def normalised(W):
    return W / W.sum(dim=-1, keepdim=True)


# (hint, what the mistake computes): a learner's usual slips, on the same input
MISTAKES = [
    (
        N_("each entry is divided by its column's sum: sum over the last axis, dim=-1"),
        lambda W: W / W.sum(dim=-2, keepdim=True),
    ),
    (
        N_(
            "the sums lost their axis: without keepdim=True a square matrix divides column j "
            "by row j's sum; keep the axis, W.sum(dim=-1, keepdim=True)"
        ),
        lambda W: W / W.sum(dim=-1),
    ),
    (N_("the rows are summed, not scaled: divide W by the sums"), lambda W: W.sum(-1, True)),
]


@leaves_state_alone
def check_normalised_rows(fn) -> CheckResult:
    """fn(W) must divide each row of W (..., n, m) by its sum, so that every row sums to 1."""
    check_function("fn", fn)
    g = seeded(0)
    inputs = [
        (tr("one square matrix"), randn(g, 4, 4).exp()),
        (tr("batched, n ≠ m"), randn(g, 2, 3, 5).exp()),
        ("float64", randn(g, 4, 6, dtype=torch.float64).exp()),
    ]
    cases = [
        Case(
            name,
            shapes(W=W),
            lambda f, W=W: f(W.clone()),
            normalised(W),
            mistakes=[(tr(hint), attempt(wrong, W)) for hint, wrong in MISTAKES],
            if_raised=tr(
                "the row sums must broadcast against W: keep their axis, "
                "W.sum(dim=-1, keepdim=True)"
            ),
        )
        for name, W in inputs
    ]
    return run_cases("normalised_rows", fn, cases, tr("return W with each row divided by its sum."))
