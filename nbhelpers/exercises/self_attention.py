"""Checkers for notebook 03, the weighted sum and self-attention: Attention(Q, K, V), a
self-attention module, and the entropy of each row of weights."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F

from ..support.language import tr
from .core import *  # noqa: F403 (the checkers' toolkit: core.__all__)
from .references import (
    reference_attention,
)


@leaves_state_alone
def check_attention_entropy(fn) -> CheckResult:
    """fn(weights) for rows that sum to 1 (or are all 0) must give each row's entropy in nats,
    H = -Σ_j a_j log a_j with 0 log 0 = 0: (..., n, m) -> (..., n). The reference is
    torch.special.entr."""
    check_function("fn", fn)
    g = seeded(23)
    masked = F.softmax(
        randn(g, 5, 5).masked_fill(torch.ones(5, 5, dtype=torch.bool).triu(1), NEG_INF), -1
    )
    inputs = [
        (tr("random weights, 4 x 6"), F.softmax(randn(g, 4, 6), -1)),
        (tr("causal weights (exact zeros)"), masked),
        (tr("one-hot and uniform rows"), torch.tensor([[1.0, 0.0, 0.0, 0.0], [0.25] * 4])),
        (tr("a row with nothing to see (all 0)"), torch.tensor([[0.5, 0.5, 0.0], [0.0, 0.0, 0.0]])),
        (tr("batched float64"), F.softmax(randn(g, 2, 3, 4, dtype=torch.float64), -1)),
    ]
    cases = []
    for name, a in inputs:
        expected = torch.special.entr(a).sum(-1)
        plogp = a * torch.log(a)
        cases.append(
            Case(
                name,
                shapes(weights=a),
                lambda f, a=a: f(a.clone()),
                expected,
                atol=1e-5 if a.dtype == torch.float32 else 1e-12,
                mistakes=[
                    (
                        tr(
                            "0 log 0 gave NaN: a zero weight contributes 0 (the limit of "
                            "p log p), so skip or zero those terms"
                        ),
                        -plogp.sum(-1),
                    ),
                    (tr("the sign: H = -Σ a log a is positive"), plogp.nan_to_num(0.0).sum(-1)),
                    (
                        tr("log base 2 (bits): the course measures entropy in nats, log = ln"),
                        -(plogp.nan_to_num(0.0) / math.log(2)).sum(-1),
                    ),
                    (
                        tr("summed over the wrong axis: one entropy per query row, dim=-1"),
                        attempt(lambda plogp=plogp: -plogp.nan_to_num(0.0).sum(-2)),
                    ),
                    (
                        tr("a mean over the keys: the entropy is a sum, H = -Σ_j a_j log a_j"),
                        -plogp.nan_to_num(0.0).mean(-1),
                    ),
                ],
            )
        )
    return run_cases(
        "attention_entropy",
        fn,
        cases,
        tr("return the entropy of each row of weights, in nats."),
    )


def tempered(Q: torch.Tensor, temperature) -> torch.Tensor:
    """Q with query i's row divided by its temperature T_i (a number, or one per query): the
    scores q_i·k_j are then divided by T_i, so F.scaled_dot_product_attention of the result
    is the reference for softmax(q_i·k_j / (√d_k T_i))."""
    T = torch.as_tensor(temperature, dtype=Q.dtype)
    return Q / (T if T.dim() == 0 else T[..., None])


def attention_cases(seed: int):
    """(name, Q, K, V, temperature or None) with n ≠ m, d_k ≠ d_v, and temperatures that are
    one number or one per query (..., n)."""
    g = seeded(seed)
    per_query = torch.tensor([0.25, 1.0, 4.0, 1.0, 0.5])
    return [
        (tr("one sentence, T = 1 (the default)"), randn(g, 5, 8), randn(g, 5, 8),
         randn(g, 5, 3), None),
        (tr("one temperature per query, T = (0.25, 1, 4, 1, 0.5)"), randn(g, 5, 8),
         randn(g, 5, 8), randn(g, 5, 3), per_query),
        (tr("n = 3 ≠ m = 6, batched, T per sentence and query (2, 3)"), randn(g, 2, 3, 4),
         randn(g, 2, 6, 4), randn(g, 2, 6, 5), torch.tensor([[0.5, 1.0, 2.0], [3.0, 1.0, 0.2]])),
        ("float64, T = 0.5", randn(g, 4, 6, dtype=torch.float64),
         randn(g, 4, 6, dtype=torch.float64), randn(g, 4, 2, dtype=torch.float64), 0.5),
        (tr("large scores, T = 2"), randn(g, 4, 8, scale=30.0), randn(g, 4, 8, scale=30.0),
         randn(g, 4, 3), 2.0),
    ]  # fmt: skip


def attention_mistakes(Q, K, V, temperature):
    d_k, d_v = Q.shape[-1], V.shape[-1]
    T = torch.as_tensor(1.0 if temperature is None else temperature, dtype=Q.dtype)
    per_row = T if T.dim() == 0 else T[..., None]  # (..., n, 1): one per query's row
    scores = Q @ K.mT

    def pair(weights):
        return weights @ V, weights

    found = [
        (
            tr("the scores are not divided by √d_k"),
            pair(F.softmax(scores / per_row, dim=-1)),
        ),
        (
            tr(
                "the scores look divided by √d_v = √{d_v}, not √d_k = √{d_k}: the scale "
                "belongs to the queries' and keys' size",
                d_v=d_v,
                d_k=d_k,
            ),
            pair(F.softmax(scores / math.sqrt(d_v) / per_row, dim=-1)) if d_v != d_k else None,
        ),
        (
            tr("the weights returned are the scores before softmax: return the softmax too"),
            (
                F.softmax(scores / math.sqrt(d_k) / per_row, dim=-1) @ V,
                scores / math.sqrt(d_k) / per_row,
            ),
        ),
        (
            tr("the rows of the weights do not sum to 1: softmax over the wrong axis? Use dim=-1"),
            attempt(lambda: pair(F.softmax(scores / math.sqrt(d_k) / per_row, dim=-2))),
        ),
        (
            tr("the scores look divided by d_k, not √d_k"),
            pair(F.softmax(scores / d_k / per_row, dim=-1)),
        ),
    ]
    if temperature is not None:
        found += [
            (
                tr("the temperature is ignored: divide each query's scores by its T"),
                pair(F.softmax(scores / math.sqrt(d_k), dim=-1)),
            ),
            (
                tr("the scores are multiplied by T: divide them by it (T > 1 flattens a row)"),
                pair(F.softmax(scores / math.sqrt(d_k) * per_row, dim=-1)),
            ),
        ]
        if T.dim() > 0:
            found.append(
                (
                    tr(
                        "the temperatures run along the keys: T[i] belongs to query i's row, "
                        "so give it a new last axis, T[..., None]"
                    ),
                    attempt(
                        lambda: pair(F.softmax(scores / math.sqrt(d_k) / T[..., None, :], dim=-1))
                    ),
                )
            )
    return found


@leaves_state_alone
def check_attention(fn) -> CheckResult:
    """fn(Q, K, V, temperature=1.0) must return (softmax(Q Kᵀ / (√d_k T)) V, the weights),
    with T one number or one temperature per query, shape (..., n)."""
    check_function("fn", fn)
    cases = []
    for name, Q, K, V, T in attention_cases(3):
        described = shapes(Q=Q, K=K, V=V) + (
            "" if T is None else f", T {tuple(torch.as_tensor(T).shape) or T}"
        )
        cases.append(
            Case(
                name,
                described,
                (lambda f, Q=Q, K=K, V=V: f(Q, K, V))
                if T is None
                else (lambda f, Q=Q, K=K, V=V, T=T: f(Q, K, V, T)),
                reference_attention(Q if T is None else tempered(Q, T), K, V),
                atol=1e-5 if Q.dtype == torch.float32 else 1e-10,
                mistakes=attention_mistakes(Q, K, V, T),
            )
        )
    return run_cases(
        "attention",
        fn,
        cases,
        tr(
            "return the attention output and the attention weights, each query's scores "
            "divided by its temperature."
        ),
    )


@leaves_state_alone
def check_self_attention(cls) -> CheckResult:
    """cls(d_model, d_k) is an nn.Module with W_Q, W_K, W_V (each nn.Linear(d_model, d_k));
    forward(X) returns the attended output (..., n, d_k). The reference is
    F.scaled_dot_product_attention on the answer's own projections: only the wiring is
    checked, not the random initialisation."""
    check_class("cls", cls)
    g = seeded(4)
    cases = []
    for name, d_model, d_k, shape in (
        (tr("d_model = 8, d_k = 4, one sentence"), 8, 4, (5, 8)),
        (tr("d_model = 6, d_k = 3, batched"), 6, 3, (2, 4, 6)),
        (tr("d_model = 12, d_k = 12"), 12, 12, (3, 12)),
    ):
        X = randn(g, *shape)

        def run(answer, d_model=d_model, d_k=d_k, X=X):
            module = build(answer, d_model, d_k)
            W = linear_weights(module, "W_Q", "W_K", "W_V")
            with torch.no_grad():
                got = module(X)
                Q, K, V = (W[name](X) for name in ("W_Q", "W_K", "W_V"))
                expected = F.scaled_dot_product_attention(Q, K, V)
                scores = Q @ K.mT
                mistakes = [
                    (
                        tr(
                            "the scores look divided by √d_model = √{d_model}, not √d_k = √{d_k}",
                            d_model=d_model,
                            d_k=d_k,
                        ),
                        F.softmax(scores / math.sqrt(d_model), dim=-1) @ V,
                    ),
                    (tr("the scores are not divided by √d_k"), F.softmax(scores, dim=-1) @ V),
                    (
                        tr("the values are X itself: project them with W_V first"),
                        attempt(lambda: F.scaled_dot_product_attention(Q, K, X)),
                    ),
                    (
                        tr("softmax over the wrong axis: the weights of each query must sum to 1"),
                        F.softmax(scores / math.sqrt(d_k), dim=-2) @ V,
                    ),
                    (
                        tr("the scores are K Qᵀ, not Q Kᵀ: row i holds query i's scores"),
                        F.softmax(scores.mT / math.sqrt(d_k), dim=-1) @ V,
                    ),
                ]
            return got, expected, mistakes

        cases.append(Case(name, shapes(X=X), run, derived=True))
    return run_cases(
        "SelfAttention",
        cls,
        cases,
        tr("build W_Q, W_K, W_V, attend over their projections."),
    )
