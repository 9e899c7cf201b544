"""Notebook 03_weighted_sum_and_self_attention: the usual mistakes in its exercises, each
with the words its report must show, and correct answers in other styles than the worked
solution."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F

from nbhelpers import running_example
from nbhelpers.exercises import check_attention, check_attention_entropy, check_verb_output
from nbhelpers.statistics import row_entropy

from . import Exercise, Says
from .nb01 import scores_of

EXAMPLE = running_example()

NEG_INF = float("-inf")


def attention_with(softmax_dim=-1, scale="d_k", temperature="row", weights_of="softmax"):
    def answer(Q, K, V, temperature_=1.0):
        divisor = {"d_k": math.sqrt(Q.shape[-1]), "d_v": math.sqrt(V.shape[-1]), None: 1.0}
        T = torch.as_tensor(temperature_, dtype=Q.dtype)
        if T.dim() > 0 and temperature != "keys":
            T = T[..., None]
        scores = scores_of(Q, K) / divisor[scale]
        if temperature == "ignore":
            pass
        elif temperature == "multiply":
            scores = scores * T
        else:  # "row", or "keys": a (..., n) tensor left to line up with the keys' axis
            scores = scores / T
        weights = F.softmax(scores, dim=softmax_dim)
        return weights @ V, (weights if weights_of == "softmax" else scores)

    return answer


def verb_query(animal, place):
    """The running example's W_Q with 歩く's row (the action feature) asking (animal, place)."""
    W_Q = EXAMPLE.W_Q.clone()
    W_Q[3] = torch.tensor([animal, place])
    return W_Q


def keys_for_particles():
    """W_K whose particle feature pulls a particle's key towards both nouns."""
    W_K = EXAMPLE.W_K.clone()
    W_K[2] = torch.tensor([1.0, 1.0])
    return W_K


def keys_against_particles():
    """W_K whose particle feature pushes a particle's key away from both nouns."""
    W_K = EXAMPLE.W_K.clone()
    W_K[2] = torch.tensor([-1.0, -1.0])
    return W_K


def attention_scaling_the_queries(Q, K, V, temperature=1.0):
    """Divide each query by T_i first: q_i / T_i · k_j = q_i · k_j / T_i."""
    T = torch.as_tensor(temperature, dtype=Q.dtype)
    Q = Q / (T if T.dim() == 0 else T.unsqueeze(-1))
    weights = torch.softmax(torch.einsum("...id,...jd->...ij", Q, K) / Q.shape[-1] ** 0.5, -1)
    return weights @ V, weights


def attention_with_sdpa(Q, K, V, temperature=1.0):
    T = torch.as_tensor(temperature, dtype=Q.dtype)
    Q = Q / (T if T.dim() == 0 else T[..., None])
    scores = Q @ K.transpose(-2, -1) / math.sqrt(Q.shape[-1])
    return F.scaled_dot_product_attention(Q, K, V), scores.softmax(-1)


EXERCISES = [
    Exercise(
        check_attention,
        "my_attention",
        mistakes=[
            (attention_with(scale=None), "not divided by √d_k"),
            (attention_with(scale="d_v"), "divided by √d_v = √3, not √d_k = √8"),
            (attention_with(weights_of="scores"), "the weights returned are the scores"),
            (attention_with(softmax_dim=-2), "softmax over the wrong axis"),
            (attention_with(temperature="ignore"), "the temperature is ignored"),
            (attention_with(temperature="multiply"), "multiplied by T"),
            (attention_with(temperature="keys"), "each key got its own temperature"),
        ],
        other_styles=[attention_scaling_the_queries, attention_with_sdpa],
    ),
    Exercise(
        check_verb_output,
        "my_subject_and_place",
        mistakes=[
            (lambda: (EXAMPLE.W_Q.clone(), EXAMPLE.W_K.clone()), "the particles take"),
            (lambda: (verb_query(8.0, 0.0), keys_against_particles()), "forgets where it walks"),
            (lambda: (verb_query(0.0, 8.0), keys_against_particles()), "too little about who"),
            (lambda: (EXAMPLE.W_Q.clone(), keys_for_particles()), "particles take"),
            (lambda: (verb_query(6.0, 1.0), keys_against_particles()), "forgets where it walks"),
            (lambda: (torch.zeros(4, 2), keys_against_particles()), "scores every key the same"),
            (
                lambda: (
                    torch.tensor([[0.0, 0, 0], [0, 0, 0], [1, 1, 0], [4, 3, 10]]),
                    torch.tensor([[1.0, 0, 0], [0, 1, 0], [0, 0, 1], [0, 0, 0]]),
                ),
                "asks for the particles",
            ),
            (lambda: (EXAMPLE.W_Q, EXAMPLE.W_K[:, :1]), Says("the same d_k")),
        ],
        other_styles=[
            # a third feature, "is a particle", that 歩く's query asks against
            lambda: (
                torch.tensor([[0.0, 0, 0], [0, 0, 0], [1, 1, 0], [4, 3, -10]]),
                torch.tensor([[1.0, 0, 0], [0, 1, 0], [0, 0, 1], [0, 0, 0]]),
            ),
        ],
    ),
    Exercise(
        check_attention_entropy,
        "my_attention_entropy",
        mistakes=[
            (lambda a: -(a * torch.log(a)).sum(-1), "0 log 0 gave NaN"),
            (lambda a: (a * torch.log(a)).nan_to_num(0.0).sum(-1), "the sign"),
            (lambda a: -(a * torch.log2(a)).nan_to_num(0.0).sum(-1), "log base 2"),
            (lambda a: -(a * torch.log(a)).nan_to_num(0.0).sum(-2), "summed over the wrong axis"),
            (lambda a: -(a * torch.log(a)).nan_to_num(0.0).mean(-1), "a mean over the keys"),
            (lambda a: row_entropy(a), Says("the answer uses row_entropy")),
        ],
        other_styles=[
            lambda a: -torch.special.xlogy(a, a).sum(-1),
            lambda a: torch.special.entr(a).sum(-1),
        ],
    ),
]
