"""Notebook 01_similarity_scores: the usual mistakes in its exercises, each with the words
its report must show, and correct answers in other styles than the worked solution."""

from __future__ import annotations

import math

import torch

from nbhelpers.exercises import check_score_divisor, check_similarity_scores

from . import Exercise

NEG_INF = float("-inf")


def scores_of(Q, K):
    return Q @ K.transpose(-2, -1)


EXERCISES = [
    Exercise(
        check_similarity_scores,
        "my_similarity_scores",
        mistakes=[
            (lambda Q, K: scores_of(Q, K), "not divided by √d_k"),
            (lambda Q, K: scores_of(Q, K) / Q.shape[-1], "divided by d_k, not √d_k"),
            (lambda Q, K: scores_of(Q, K) / math.sqrt(K.shape[-2]), "√m (the number of keys)"),
            (lambda Q, K: K @ Q.transpose(-2, -1) / math.sqrt(Q.shape[-1]), "this is K Qᵀ"),
            (lambda Q, K: scores_of(Q, K) / math.sqrt(Q.shape[-2]), "√n (the number of queries)"),
        ],
        other_styles=[
            lambda Q, K: torch.einsum("...nd,...md->...nm", Q, K) / Q.shape[-1] ** 0.5,
            lambda Q, K: (Q / math.sqrt(Q.shape[-1])) @ K.mT,
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
