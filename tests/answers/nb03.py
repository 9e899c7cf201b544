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


def attention_with(softmax_dim=-1, scale="d_k", mask_mode="add", weights_of="softmax"):
    def answer(Q, K, V, mask=None):
        divisor = {"d_k": math.sqrt(Q.shape[-1]), "d_v": math.sqrt(V.shape[-1]), None: 1.0}
        scores = scores_of(Q, K) / divisor[scale]
        if mask is not None and mask_mode == "add":
            scores = scores + mask
        weights = F.softmax(scores, dim=softmax_dim)
        if mask is not None and mask_mode == "after":
            weights = weights * (mask == 0)
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


def attention_renormalised(Q, K, V, mask=None):
    """Softmax without the mask, then zero the blocked weights and renormalise."""
    weights = F.softmax(scores_of(Q, K) / math.sqrt(Q.shape[-1]), dim=-1)
    if mask is not None:
        weights = weights * torch.isfinite(mask)
        weights = weights / weights.sum(-1, keepdim=True)
    return weights @ V, weights


def attention_in_log_space(Q, K, V, mask=None):
    scores = torch.einsum("...id,...jd->...ij", Q, K) / math.sqrt(Q.shape[-1])
    weights = torch.exp(F.log_softmax(scores + (0 if mask is None else mask), dim=-1))
    return torch.einsum("...ij,...jd->...id", weights, V), weights


def attention_with_sdpa(Q, K, V, mask=None):
    scores = Q @ K.transpose(-2, -1) / math.sqrt(Q.shape[-1]) + (0 if mask is None else mask)
    return F.scaled_dot_product_attention(Q, K, V, attn_mask=mask), scores.softmax(-1)


EXERCISES = [
    Exercise(
        check_attention,
        "my_attention",
        mistakes=[
            (attention_with(scale=None), "not divided by √d_k"),
            (attention_with(scale="d_v"), "divided by √d_v = √3, not √d_k = √8"),
            (attention_with(weights_of="scores"), "the weights returned are the scores"),
            (attention_with(softmax_dim=-2), "softmax over the wrong axis"),
            (attention_with(mask_mode="ignore"), "the mask is ignored"),
            (attention_with(mask_mode="after"), "applied after softmax"),
        ],
        other_styles=[attention_renormalised, attention_in_log_space, attention_with_sdpa],
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
