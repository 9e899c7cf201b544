"""Checkers for notebook 01, similarity scores: S = Q Kᵀ / √d_k without a matrix product,
and projections W_Q, W_K designed so that each particle finds the noun it marks."""

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
    (torch.linalg, "matmul", "torch.linalg.matmul"),
    (torch.linalg, "multi_dot", "torch.linalg.multi_dot"),
    (torch, "chain_matmul", "torch.chain_matmul"),
    (torch, "vdot", "torch.vdot"),
    (torch, "addmv", "torch.addmv"),
    (torch, "addbmm", "torch.addbmm"),
    (torch.Tensor, "addmm", "Tensor.addmm"),
    (torch.Tensor, "baddbmm", "Tensor.baddbmm"),
    (F, "linear", "F.linear"),
]


def without_position_loops(f, Q, K):
    """f(Q, K), refused when the answer makes more torch operations for more tokens: a Python
    loop over the queries or the keys, which the exercise replaces with one broadcast."""
    _, few = torch_calls(f, Q[..., :2, :].clone(), K[..., :2, :].clone())
    got, many = torch_calls(f, Q, K)
    if many != few:
        raise Rejected(
            tr("the answer loops over the tokens in Python"),
            tr(
                "it makes {few} torch operations for 2 queries and 2 keys but {many} for "
                "{n} and {m}: compute every pair at once, by broadcasting, not one i or j "
                "at a time",
                few=few,
                many=many,
                n=Q.shape[-2],
                m=K.shape[-2],
            ),
        )
    return got


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
        (tr("a batch of one"), (1,), 3, 3, 4, torch.float32),  # keeps its batch axis
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
                        "it calls {name}, which does the sum over f for you: give Q an "
                        "axis for the keys and K one for the queries, so that every query "
                        "meets every key, then sum over f",
                        name=called,
                    ),
                    without_position_loops,
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


# What each query of the running example must score highest, and the other keys it must beat
# by MARGIN after the division by √d_k: the particles find the noun they mark, and the verb
# keeps finding its subject.
WANTED = (("が", "犬"), ("を", "河岸"), ("歩く", "犬"))
MARGIN = 0.25


def _particle_hint(query: str, wanted: str, row: dict) -> str:
    """Why `query`'s row of scores misses `wanted`, from what it scores highest instead."""
    others = {token: score for token, score in row.items() if token != wanted}
    rival = max(others, key=others.get)
    if query == "歩く":
        return tr(
            "歩く no longer finds its subject: row 3 of W_Q (the action feature) is what 歩く "
            "asks for; keep it asking for an animal most"
        )
    if max(row.values()) - min(row.values()) < 1e-6:
        return tr(
            "{query} asks for nothing: it scores every key alike. A particle's x has the "
            "particle feature and a little of its noun's feature: let W_Q turn that into a "
            "question",
            query=query,
        )
    if row[wanted] > others[rival] + 1e-6:
        return tr(
            "{wanted} wins, but by less than {margin} over {rival}: make the question sharper "
            "(larger entries in W_Q), not only right",
            wanted=wanted,
            margin=MARGIN,
            rival=rival,
        )
    if abs(others[rival] - row[wanted]) < 1e-6:
        return tr(
            "{query} scores {wanted} and {rival} alike: its query asks for both. Which "
            "features of x tell が from を? Let W_Q read them",
            query=query,
            wanted=wanted,
            rival=rival,
        )
    if rival == query:
        return tr(
            "{query} scores itself highest: its key carries the particle feature, or its "
            "query asks for particles; let the keys say only what kind of noun a token is",
            query=query,
        )
    return tr(
        "{query} looks for {rival}, not {wanted}: which feature of x does {query} share "
        "with {wanted}, and which row of W_Q turns it into a question?",
        query=query,
        rival=rival,
        wanted=wanted,
    )


@leaves_state_alone
def check_projections(fn) -> CheckResult:
    """fn() must return (W_Q, W_K), each (4, d_k), such that on the running example each
    particle scores the noun it marks highest (が: 犬, を: 河岸) and 歩く still scores its
    subject 犬 highest, each by MARGIN over every other key after the division by √d_k.
    Many answers pass: the checker tests what the scores say, not the numbers chosen."""
    from ..example import running_example

    name = "projections"
    answer, report = designed_weights(name, fn, "my_projections()")
    if report is not None:
        return report
    W_Q, W_K = answer
    example = running_example()
    X = example.X.double()
    S = (X @ W_Q) @ (X @ W_K).T / math.sqrt(W_Q.shape[1])  # (5, 5) scaled scores
    tokens = list(example.tokens)
    rows = {
        query: {key: float(S[tokens.index(query), j]) for j, key in enumerate(tokens)}
        for query, _ in WANTED
    }
    shown = [
        "  "
        + tr(
            "{query}: {scores}",
            query=query,
            scores="  ".join(f"{key} {score:.2f}" for key, score in rows[query].items()),
        )
        for query, _ in WANTED
    ]
    for query, wanted in WANTED:
        row = rows[query]
        lead = row[wanted] - max(v for key, v in row.items() if key != wanted)
        if lead < MARGIN:
            return CheckResult(
                name,
                FAILED,
                [
                    "✗ "
                    + tr(
                        "{exercise}: {query} must score {wanted} highest, by at least "
                        "{margin} (the scaled scores of the three queries):",
                        exercise=name,
                        query=query,
                        wanted=wanted,
                        margin=MARGIN,
                    ),
                    *shown,
                    "  " + tr("hint: {hint}", hint=_particle_hint(query, wanted, row)),
                ],
            )
    return CheckResult(
        name,
        PASSED,
        [
            "✓ "
            + tr(
                "{exercise}: passed: が finds 犬, を finds 河岸, and 歩く still finds 犬 "
                "(the scaled scores):",
                exercise=name,
            ),
            *shown,
        ],
    )
