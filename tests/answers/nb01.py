"""Notebook 01_similarity_scores: the usual mistakes in its exercises, each with the words
its report must show, and correct answers in other styles than the worked solution."""

from __future__ import annotations

import math

import torch

from nbhelpers import running_example
from nbhelpers.exercises import check_projections, check_similarity_scores

from . import Exercise, Says

NEG_INF = float("-inf")
EXAMPLE = running_example()


def rows_of_W_Q(a=(0, 0), p=(0, 0), particle=(0, 0), verb=(4, 3)):
    """W_Q with rows for the features animal (a), place (p), particle and action (verb)."""
    return torch.tensor([a, p, particle, verb], dtype=torch.float32)


def keys_with_particles():
    """W_K whose keys also say "is a particle": the particles then find themselves."""
    return torch.tensor([[1.0, 0], [0, 1.0], [2.0, 2.0], [0, 0]])


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
            (
                lambda Q, K: (scores_of(Q, K) / math.sqrt(Q.shape[-1])).squeeze(),
                "axis 0 (of 1) is missing",
            ),
            (
                lambda Q, K: (
                    torch.stack([(q.unsqueeze(-2) * K).sum(-1) for q in Q.unbind(-2)], dim=-2)
                    / math.sqrt(Q.shape[-1])
                ),
                "by broadcasting, not one i or j at a time",
            ),
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
                sum(  # a loop over the features f, not over the tokens
                    Q[..., :, None, f] * K[..., None, :, f] for f in range(Q.shape[-1])
                )
                / math.sqrt(Q.shape[-1])
            ),
        ],
    ),
    Exercise(
        check_projections,
        "my_projections",
        mistakes=[
            (lambda: (EXAMPLE.W_Q.clone(), EXAMPLE.W_K.clone()), "scores 犬 and 河岸 alike"),
            (lambda: (rows_of_W_Q(p=(1, 0), particle=(1, 1)), EXAMPLE.W_K.clone()), "alike"),
            (lambda: (rows_of_W_Q(a=(0, 2), p=(2, 0)), EXAMPLE.W_K.clone()), "looks for 河岸"),
            (lambda: (rows_of_W_Q(a=(1, 0), p=(0, 1)), EXAMPLE.W_K.clone()), "by less than"),
            (lambda: (rows_of_W_Q(a=(2, 0), p=(0, 2), verb=(3, 4)), EXAMPLE.W_K), "歩く no longer"),
            (lambda: (rows_of_W_Q(a=(0, 0), p=(0, 0)), EXAMPLE.W_K.clone()), "asks for nothing"),
            (
                lambda: (rows_of_W_Q(a=(2, 0), p=(0, 2), particle=(2, 2)), keys_with_particles()),
                "scores itself highest",
            ),
            (lambda: (EXAMPLE.W_Q, EXAMPLE.W_K[:, :1]), Says("the same d_k")),
        ],
        other_styles=[
            # a third feature: each particle asks for the kind of noun it leans to, scaled up
            lambda: (
                torch.tensor([[4.0, 0, 0], [0, 4.0, 0], [0, 0, 0], [4.0, 3.0, 0]]),
                torch.tensor([[1.0, 0, 0], [0, 1.0, 0], [0, 0, 1.0], [0, 0, 0]]),
            ),
        ],
    ),
]
