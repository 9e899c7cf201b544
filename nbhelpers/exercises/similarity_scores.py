"""Checkers for notebook 01, similarity scores: S = Q Kᵀ / √d_k, and the divisor for any
variance."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F

from ..support.language import tr
from .core import *  # noqa: F403 (the checkers' toolkit: core.__all__)

# What my_similarity_scores is asked to build from s_ij = Σ_f q_if k_jf / √d_k: an answer
# that hands the sum over f to a matrix product is refused.
MATRIX_PRODUCTS = [
    (torch.Tensor, "__matmul__", "@"),
    (torch.Tensor, "__rmatmul__", "@"),
    (torch, "matmul", "torch.matmul"),
    (torch.Tensor, "matmul", "Tensor.matmul"),
    (torch, "mm", "torch.mm"),
    (torch.Tensor, "mm", "Tensor.mm"),
    (torch, "bmm", "torch.bmm"),
    (torch.Tensor, "bmm", "Tensor.bmm"),
    (torch, "einsum", "torch.einsum"),
    (torch, "tensordot", "torch.tensordot"),
    (torch, "inner", "torch.inner"),
    (torch.Tensor, "inner", "Tensor.inner"),
    (torch.linalg, "vecdot", "torch.linalg.vecdot"),
    (torch, "dot", "torch.dot"),
    (torch.Tensor, "dot", "Tensor.dot"),
    (torch, "mv", "torch.mv"),
    (torch.Tensor, "mv", "Tensor.mv"),
    (torch, "addmm", "torch.addmm"),
    (torch, "baddbmm", "torch.baddbmm"),
    (F, "linear", "F.linear"),
]


@leaves_state_alone
def check_similarity_scores(fn) -> CheckResult:
    """fn(Q, K) must give Q Kᵀ / √d_k: (..., n, d_k), (..., m, d_k) -> (..., n, m), built from
    the definition s_ij = Σ_f q_if k_jf / √d_k without a matrix product."""
    check_function("fn", fn)
    g = seeded(1)
    cases = []
    for name, batch, n, m, d_k, dtype in (
        (tr("n ≠ m, batched"), (2,), 3, 6, 4, torch.float32),
        (tr("one sentence, n = m"), (), 5, 5, 8, torch.float32),
        (tr("two batch dims, d_k = 16"), (2, 3), 4, 2, 16, torch.float32),
        ("float64", (2,), 3, 4, 8, torch.float64),
    ):
        Q, K = randn(g, *batch, n, d_k, dtype=dtype), randn(g, *batch, m, d_k, dtype=dtype)
        product = Q @ K.transpose(-2, -1)
        cases.append(
            Case(
                name,
                shapes(Q=Q, K=K),
                lambda f, Q=Q, K=K: calling_none_of(
                    MATRIX_PRODUCTS,
                    lambda called: tr(
                        "it calls {name}, which does the sum over f for you: pair every "
                        "query with every key by broadcasting, Q[..., :, None, :] * "
                        "K[..., None, :, :], then sum over the last axis",
                        name=called,
                    ),
                    f,
                    Q.clone(),
                    K.clone(),
                ),
                torch.matmul(Q, K.mT) / math.sqrt(d_k),
                mistakes=[
                    (
                        tr("the scores are not divided by √d_k: divide the sums by math.sqrt(d_k)"),
                        product,
                    ),
                    (tr("the scores look divided by d_k, not √d_k"), product / d_k),
                    (
                        tr("the scores look divided by √m (the number of keys), not √d_k"),
                        product / math.sqrt(m),
                    ),
                    (
                        tr("the scores look divided by √n (the number of queries), not √d_k"),
                        product / math.sqrt(n),
                    ),
                    (
                        tr("this is K Qᵀ: rows are queries (i) and columns keys (j), s_ij"),
                        product.transpose(-2, -1) / math.sqrt(d_k),
                    ),
                ],
            )
        )
    return run_cases(
        "similarity_scores",
        fn,
        cases,
        tr(
            "return the (..., n, m) matrix of scaled similarity scores, summing over f "
            "without a matrix product."
        ),
    )


@leaves_state_alone
def check_score_divisor(fn) -> CheckResult:
    """fn(d_k, sigma_q, sigma_k) must give the number to divide q·k by so that the scores
    have variance 1 when the entries of q and of k are independent with mean 0 and standard
    deviations sigma_q and sigma_k: Var(q·k) = d_k σ_q² σ_k², so the divisor is √d_k σ_q σ_k.
    (The tests confirm the formula on a million sampled pairs.)"""
    check_function("fn", fn)
    cases = []
    for name, d_k, s_q, s_k in (
        (tr("σ_q = 0.5, σ_k = 3, d_k = 8"), 8, 0.5, 3.0),
        (tr("unit variance, d_k = 64"), 64, 1.0, 1.0),
        (tr("σ = 2 for both, d_k = 16"), 16, 2.0, 2.0),
        (tr("one feature, σ_q = 1, σ_k = 4"), 1, 1.0, 4.0),
    ):

        def value(x):
            return torch.tensor(float(x), dtype=torch.float64)

        root = math.sqrt(d_k)
        cases.append(
            Case(
                name,
                f"d_k = {d_k}, sigma_q = {s_q:g}, sigma_k = {s_k:g}",
                lambda f, d_k=d_k, s_q=s_q, s_k=s_k: value(f(d_k, s_q, s_k)),
                value(math.sqrt(d_k * s_q**2 * s_k**2)),
                atol=1e-9 * root * s_q * s_k,
                mistakes=[
                    (
                        tr(
                            "only √d_k: that assumes variance 1; with σ_q and σ_k the "
                            "variance of q·k is d_k σ_q² σ_k²"
                        ),
                        value(root),
                    ),
                    (
                        tr("a variance, not a standard deviation: take the square root"),
                        value(d_k * s_q**2 * s_k**2),
                    ),
                    (
                        tr("σ² where σ belongs: divide by the standard deviation √d_k σ_q σ_k"),
                        value(root * s_q**2 * s_k**2),
                    ),
                    (
                        tr("d_k where √d_k belongs"),
                        value(d_k * s_q * s_k),
                    ),
                    (
                        tr("one σ is missing: both the queries and the keys scale q·k"),
                        value(root * s_q) if s_q != s_k else None,
                    ),
                    (
                        tr("one σ is missing: both the queries and the keys scale q·k"),
                        value(root * s_k) if s_q != s_k else None,
                    ),
                    (
                        tr("σ_q + σ_k: the variances multiply, they do not add"),
                        value(root * (s_q + s_k)),
                    ),
                ],
            )
        )
    return run_cases(
        "score_divisor",
        fn,
        cases,
        tr("return the number to divide q·k by so that the scores have variance 1."),
    )
