"""Notebook 03_weighted_sum_and_self_attention: the usual mistakes in its exercises, each
with the words its report must show, and correct answers in other styles than the worked
solution."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

from nbhelpers.exercises import check_attention, check_attention_entropy, check_self_attention

from . import Exercise
from .nb01 import scores_of

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


def self_attention_class(scale_by="d_k", project_values=True, dim=-1, transposed=False):
    class Answer(nn.Module):
        def __init__(self, d_model, d_k):
            super().__init__()
            self.d_model = d_model
            self.W_Q, self.W_K, self.W_V = (nn.Linear(d_model, d_k) for _ in range(3))

        def forward(self, X):
            Q, K = self.W_Q(X), self.W_K(X)
            V = self.W_V(X) if project_values else X
            scale = {"d_k": Q.shape[-1], "d_model": self.d_model, "none": 1}[scale_by]
            scores = scores_of(K, Q) if transposed else scores_of(Q, K)
            return F.softmax(scores / math.sqrt(scale), dim=dim) @ V

    return Answer


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
            (attention_with(temperature="keys"), "the temperatures run along the keys"),
        ],
        other_styles=[attention_scaling_the_queries, attention_with_sdpa],
    ),
    Exercise(
        check_self_attention,
        "MySelfAttention",
        mistakes=[
            (self_attention_class(scale_by="d_model"), "divided by √d_model = √8, not √d_k = √4"),
            (self_attention_class(scale_by="none"), "not divided by √d_k"),
            (self_attention_class(project_values=False), "the values are X itself"),
            (self_attention_class(dim=-2), "softmax over the wrong axis"),
            (self_attention_class(transposed=True), "the scores are K Qᵀ"),
        ],
        other_styles=[],
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
        ],
        other_styles=[
            lambda a: -torch.special.xlogy(a, a).sum(-1),
            lambda a: torch.special.entr(a).sum(-1),
        ],
    ),
]
