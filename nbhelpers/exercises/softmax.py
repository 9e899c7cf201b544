"""Checkers for notebook 02, softmax: log-softmax, and the backward pass of softmax."""

from __future__ import annotations

import torch
import torch.nn.functional as F

from ..support.language import tr
from .core import *  # noqa: F403 (the checkers' toolkit: core.__all__)


def top(s):
    """max(s) over the last axis, 0 where a row is all -inf (so that s - m stays -inf)."""
    m = s.amax(-1, keepdim=True)
    return torch.where(torch.isneginf(m), torch.zeros_like(m), m)


def magnitude(s: torch.Tensor) -> float:
    """The size of the largest finite entry, at least 1: what a tolerance scales with."""
    finite = s[torch.isfinite(s)]
    return max(1.0, float(finite.abs().max())) if finite.numel() else 1.0


# What my_log_softmax is asked to build: an answer that calls one of these is refused.
LOG_SOFTMAX_BUILTINS = [
    (torch, "logsumexp", "torch.logsumexp"),
    (torch.Tensor, "logsumexp", "Tensor.logsumexp"),
    (torch, "log_softmax", "torch.log_softmax"),
    (torch.Tensor, "log_softmax", "Tensor.log_softmax"),
    (F, "log_softmax", "F.log_softmax"),
    (torch.special, "logsumexp", "torch.special.logsumexp"),
    (torch.special, "log_softmax", "torch.special.log_softmax"),
]


@leaves_state_alone
def check_log_softmax(fn) -> CheckResult:
    """fn(scores) must give log softmax over the last axis, s - logsumexp(s): finite where the
    weight underflows to 0 (a gap of 1000), stable at ±1000, and -inf only where s is -inf."""
    check_function("fn", fn)
    g = seeded(21)
    inputs = [
        (tr("a 4 x 6 matrix"), randn(g, 4, 6)),
        (tr("batched (2, 3, 5)"), randn(g, 2, 3, 5)),
        ("float64", randn(g, 3, 4, dtype=torch.float64)),
        (tr("large scores ±1000"), torch.tensor([[1000.0, 999.0, 998.0], [-1000.0, -999.0, 0.0]])),
        (tr("a masked key (-inf)"), torch.tensor([[0.5, NEG_INF, 2.0], [1.0, 0.0, NEG_INF]])),
    ]
    cases = []
    for name, s in inputs:
        cases.append(
            Case(
                name,
                shapes(scores=s),
                lambda f, s=s: calling_none_of(
                    LOG_SOFTMAX_BUILTINS,
                    lambda called: tr(
                        "it calls {name}, what you are writing: compute s - m - log Σ "
                        "exp(s - m) yourself, with m the row's maximum",
                        name=called,
                    ),
                    f,
                    s.clone(),
                ),
                F.log_softmax(s, dim=-1),
                # float32 spaces numbers near 1000 about 6e-5 apart: the tolerance follows
                atol=(1e-5 if s.dtype == torch.float32 else 1e-12) * magnitude(s),
                mistakes=[
                    (
                        tr(
                            "log of softmax underflows: a weight of e^-1000 is 0 in floating "
                            "point and its log -inf; compute s - logsumexp(s) instead"
                        ),
                        torch.log(F.softmax(s, dim=-1)),
                    ),
                    (
                        tr(
                            "exp overflows without the maximum: subtract max(s) before exp, "
                            "logsumexp(s) = m + log Σ exp(s - m)"
                        ),
                        s - torch.log(torch.exp(s).sum(-1, keepdim=True)),
                    ),
                    (
                        tr("over the wrong axis: normalise over dim=-1"),
                        attempt(F.log_softmax, s, 0),
                    ),
                    (
                        tr("the softmax itself, not its log"),
                        F.softmax(s, dim=-1),
                    ),
                    (
                        tr(
                            "the maximum was taken away inside exp but not added back: "
                            "logsumexp(s) = m + log Σ exp(s - m)"
                        ),
                        attempt(lambda s=s: s - torch.log(torch.exp(s - top(s)).sum(-1, True))),
                    ),
                ],
            )
        )
    return run_cases(
        "log_softmax",
        fn,
        cases,
        tr("return the log-probabilities of s over its last axis."),
    )


# What my_softmax_backward must not hand the work to: autograd computes J g itself.
AUTOGRAD = [
    (torch.autograd, "grad", "torch.autograd.grad"),
    (torch.autograd, "backward", "torch.autograd.backward"),
    (torch.Tensor, "backward", "Tensor.backward"),
    (torch.autograd.functional, "jacobian", "torch.autograd.functional.jacobian"),
    (torch.autograd.functional, "vjp", "torch.autograd.functional.vjp"),
    (torch.func, "vjp", "torch.func.vjp"),
    (torch.func, "jacrev", "torch.func.jacrev"),
]


def without_the_jacobian(f, a, g):
    """f(a, g), refused if it calls autograd or builds a tensor of (m, m) per row."""
    rows, m = a.numel() // a.shape[-1], a.shape[-1]
    got, largest = largest_tensor_made(
        lambda: calling_none_of(
            AUTOGRAD,
            lambda called: tr(
                "it calls {name}: autograd computes the backward pass you are writing; expand "
                "(diag(a) - a aᵀ) g by hand",
                name=called,
            ),
            f,
            a,
            g,
        )
    )
    if largest >= rows * m * m:
        raise Rejected(
            tr("the answer builds a tensor of {m} x {m} numbers per row: the Jacobian", m=m),
            tr(
                "expand (diag(a) - a aᵀ) g: each entry is a_l g_l - a_l (a·g), and a·g is one "
                "number per row"
            ),
        )
    return got


@leaves_state_alone
def check_softmax_backward(fn) -> CheckResult:
    """fn(a, g) for weights a = softmax(s) and an upstream gradient g = ∂ℓ/∂a, both (..., m),
    must give ∂ℓ/∂s = J g without building the (m, m) Jacobian J and without autograd:
    a ⊙ (g - a·g). The reference is torch.autograd.grad through F.softmax."""
    check_function("fn", fn)
    gen = seeded(22)
    cases = []
    for name, shape, dtype in (
        (tr("one row of 5 weights"), (5,), torch.float32),
        (tr("a 4 x 6 matrix of rows"), (4, 6), torch.float32),
        (tr("batched (2, 3, 5)"), (2, 3, 5), torch.float32),
        ("float64", (3, 4), torch.float64),
    ):
        s = randn(gen, *shape, dtype=dtype, scale=2.0).requires_grad_()
        a = F.softmax(s, dim=-1)
        g = randn(gen, *shape, dtype=dtype)
        (expected,) = torch.autograd.grad(a, s, g)
        a, g = a.detach(), g
        dot = (a * g).sum(-1, keepdim=True)
        cases.append(
            Case(
                name,
                shapes(a=a, g=g),
                lambda f, a=a, g=g: without_the_jacobian(f, a.clone(), g.clone()),
                expected,
                atol=1e-6 if dtype == torch.float32 else 1e-12,
                mistakes=[
                    (
                        tr(
                            "a ⊙ g alone: the - a aᵀ part of the Jacobian is missing, a ⊙ (g - a·g)"
                        ),
                        a * g,
                    ),
                    (
                        tr("g - a·g without the factor a: ∂ℓ/∂s_l = a_l (g_l - a·g)"),
                        g - dot,
                    ),
                    (
                        tr("the sum a·g runs over the wrong axis: sum over dim=-1, one per row"),
                        attempt(lambda a=a, g=g: a * (g - (a * g).sum(0, keepdim=True))),
                    ),
                    (
                        tr("the sign is reversed: a ⊙ (g - a·g), not a ⊙ (a·g - g)"),
                        -(a * (g - dot)),
                    ),
                    (
                        tr(
                            "a (1 - a) ⊙ g is the Jacobian's diagonal alone (the sigmoid's "
                            "derivative): the cross terms -a_i a_j are missing, a ⊙ (g - a·g)"
                        ),
                        a * (1 - a) * g,
                    ),
                ],
            )
        )
    return run_cases(
        "softmax_backward",
        fn,
        cases,
        tr("return the gradient of the loss with respect to the scores s."),
    )
