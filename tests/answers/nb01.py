"""Notebook 01_similarity_scores: the usual mistakes in its exercises, each with the words
its report must show, and correct answers in other styles than the worked solution."""

from __future__ import annotations

import math

import torch

from nbhelpers.exercises import check_score_divisor, check_similarity_scores

from . import Exercise

NEG_INF = float("-inf")


def scores_of(Q, K):
    """Σ_f q_if k_jf for every pair, without a matrix product, as the exercise asks."""
    return (Q.unsqueeze(-2) * K.unsqueeze(-3)).sum(-1)


EXERCISES = [
    Exercise(
        check_similarity_scores,
        "my_similarity_scores",
        mistakes=[
            (lambda Q, K: scores_of(Q, K), "not divided by √d_k"),
            (lambda Q, K: scores_of(Q, K) / Q.shape[-1], "divided by d_k, not √d_k"),
            (lambda Q, K: scores_of(Q, K) / math.sqrt(K.shape[-2]), "√m (the number of keys)"),
            (lambda Q, K: scores_of(K, Q) / math.sqrt(Q.shape[-1]), "this is K Qᵀ"),
            (lambda Q, K: scores_of(Q, K) / math.sqrt(Q.shape[-2]), "√n (the number of queries)"),
            (lambda Q, K: Q @ K.transpose(-2, -1) / math.sqrt(Q.shape[-1]), "it calls @"),
            (lambda Q, K: torch.matmul(Q, K.mT) / math.sqrt(Q.shape[-1]), "calls torch.matmul"),
            (
                lambda Q, K: torch.einsum("...nd,...md->...nm", Q, K) / Q.shape[-1] ** 0.5,
                "calls torch.einsum",
            ),
            (
                lambda Q, K: torch.nn.functional.linear(Q, K) / Q.shape[-1] ** 0.5,
                "calls F.linear",
            ),
        ],
        other_styles=[
            lambda Q, K: (Q[..., :, None, :] * K[..., None, :, :]).sum(-1) / Q.shape[-1] ** 0.5,
            lambda Q, K: (
                torch.stack(
                    [(Q * K[..., j : j + 1, :]).sum(-1) for j in range(K.shape[-2])], dim=-1
                )
                / math.sqrt(Q.shape[-1])
            ),
        ],
    ),
    Exercise(
        check_score_divisor,
        "my_score_divisor",
        mistakes=[
            (lambda d, sq, sk: math.sqrt(d), "only √d_k"),
            (lambda d, sq, sk: d * sq**2 * sk**2, "a variance, not a standard deviation"),
            (lambda d, sq, sk: math.sqrt(d) * sq**2 * sk**2, "σ² where σ belongs"),
            (lambda d, sq, sk: d * sq * sk, "d_k where √d_k belongs"),
            (lambda d, sq, sk: math.sqrt(d) * (sq + sk), "the variances multiply"),
        ],
        other_styles=[lambda d, sq, sk: (d * sq**2 * sk**2) ** 0.5],
    ),
]
