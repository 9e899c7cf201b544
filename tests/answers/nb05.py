"""Notebook 05_multi_head_attention: the usual mistakes in its exercises, each with the words
its report must show, and correct answers in other styles than the worked solution."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

from nbhelpers.exercises import check_causal_multi_head, check_grouped_query_attention

from . import Exercise, Says
from .nb01 import scores_of

NEG_INF = float("-inf")


def grouped_class(
    scale_by="d_head",
    use_output=True,
    transpose=True,
    merge_transpose=True,
    share="interleave",
    kv_width="grouped",
):
    """share: "interleave" (head r uses K/V head r // g) or "tile" (r % n_kv);
    kv_width: "grouped" (n_kv_heads * d_head) or "full" (d_model, as plain multi-head)."""

    class Answer(nn.Module):
        def __init__(self, d_model, n_heads, n_kv_heads):
            super().__init__()
            self.h, self.h_kv = n_heads, n_kv_heads
            d_kv = n_kv_heads * (d_model // n_heads) if kv_width == "grouped" else d_model
            self.W_Q, self.W_O = nn.Linear(d_model, d_model), nn.Linear(d_model, d_model)
            self.W_K, self.W_V = nn.Linear(d_model, d_kv), nn.Linear(d_model, d_kv)

        def forward(self, x):
            *batch, n, d = x.shape
            d_head = d // self.h

            def heads(t, count):
                if transpose:
                    return t.view(*batch, n, count, d_head).transpose(-3, -2)
                return t.reshape(*batch, count, n, d_head)

            q = heads(self.W_Q(x), self.h)
            k, v = (heads(W(x), self.h_kv) for W in (self.W_K, self.W_V))
            g = self.h // self.h_kv
            if share == "interleave":
                k, v = k.repeat_interleave(g, -3), v.repeat_interleave(g, -3)
            else:
                k, v = torch.cat([k] * g, -3), torch.cat([v] * g, -3)
            scale = d_head if scale_by == "d_head" else d
            out = F.softmax(scores_of(q, k) / math.sqrt(scale), -1) @ v
            out = (out.transpose(-3, -2) if merge_transpose else out).reshape(*batch, n, d)
            return self.W_O(out) if use_output else out

    return Answer


class GroupedWithSdpa(nn.Module):
    """Another style: torch's own grouped attention, with the heads in a loop over groups."""

    def __init__(self, d_model, n_heads, n_kv_heads):
        super().__init__()
        self.h, self.h_kv, self.d_head = n_heads, n_kv_heads, d_model // n_heads
        self.W_Q = nn.Linear(d_model, d_model)
        self.W_K = nn.Linear(d_model, n_kv_heads * self.d_head)
        self.W_V = nn.Linear(d_model, n_kv_heads * self.d_head)
        self.W_O = nn.Linear(d_model, d_model)

    def forward(self, x):
        g = self.h // self.h_kv
        q_heads = self.W_Q(x).split(self.d_head, -1)
        k_heads = self.W_K(x).split(self.d_head, -1)
        v_heads = self.W_V(x).split(self.d_head, -1)
        outs = [
            F.scaled_dot_product_attention(q, k_heads[r // g], v_heads[r // g])
            for r, q in enumerate(q_heads)
        ]
        return self.W_O(torch.cat(outs, -1))


def fused_class(
    mask=True,
    average=False,
    layout="qkv",
    scale_by="d_head",
    use_output=True,
    diagonal=1,
    squeeze=False,
):
    """mask: True (before softmax), False, or "after" (zeroing the weights after softmax);
    layout: "qkv" (split [Q | K | V], then heads), "per_head", or "no_transpose"."""

    class Fused(nn.Module):
        def __init__(self, d_model, n_heads):
            super().__init__()
            self.h = n_heads
            self.W_QKV = nn.Linear(d_model, 3 * d_model)
            self.W_O = nn.Linear(d_model, d_model)

        def forward(self, x):
            *batch, n, d = x.shape
            d_head = d // self.h
            qkv = self.W_QKV(x)
            if layout == "qkv":
                q, k, v = (
                    t.unflatten(-1, (self.h, d_head)).transpose(-3, -2) for t in qkv.split(d, -1)
                )
            elif layout == "no_transpose":
                q, k, v = (t.reshape(*batch, self.h, n, d_head) for t in qkv.split(d, -1))
            else:
                q, k, v = (
                    qkv.unflatten(-1, (self.h, 3 * d_head)).transpose(-3, -2).split(d_head, -1)
                )
            scores = q @ k.mT / math.sqrt(d_head if scale_by == "d_head" else d)
            future = torch.ones(n, n, dtype=torch.bool).triu(diagonal)
            if mask is True:
                scores = scores.masked_fill(future, NEG_INF)
            weights = F.softmax(scores, -1)
            if mask == "after":
                weights = weights.masked_fill(future, 0.0)
            out = (weights @ v).transpose(-3, -2).flatten(-2)
            if squeeze:  # a size-1 axis squeezed away
                weights = weights.squeeze(-3)
            return (self.W_O(out) if use_output else out), (
                weights.mean(-3) if average else weights
            )

    return Fused


class GroupedWithGqa(nn.Module):
    """PyTorch's own grouping, the shortcut the exercise rules out."""

    def __init__(self, d_model, n_heads, n_kv_heads):
        super().__init__()
        self.h, self.h_kv = n_heads, n_kv_heads
        d_head = d_model // n_heads
        self.W_Q, self.W_O = nn.Linear(d_model, d_model), nn.Linear(d_model, d_model)
        self.W_K = nn.Linear(d_model, n_kv_heads * d_head)
        self.W_V = nn.Linear(d_model, n_kv_heads * d_head)

    def forward(self, x):
        q = self.W_Q(x).unflatten(-1, (self.h, -1)).transpose(-3, -2)
        k = self.W_K(x).unflatten(-1, (self.h_kv, -1)).transpose(-3, -2)
        v = self.W_V(x).unflatten(-1, (self.h_kv, -1)).transpose(-3, -2)
        heads = F.scaled_dot_product_attention(q, k, v, enable_gqa=True)
        return self.W_O(heads.transpose(-3, -2).flatten(-2))


class FusedWithSdpa(nn.Module):
    def __init__(self, d_model, n_heads):
        super().__init__()
        self.h = n_heads
        self.W_QKV = nn.Linear(d_model, 3 * d_model)
        self.W_O = nn.Linear(d_model, d_model)

    def forward(self, x):
        d = x.shape[-1]
        q, k, v = (
            t.unflatten(-1, (self.h, d // self.h)).transpose(-3, -2)
            for t in self.W_QKV(x).split(d, -1)
        )
        out = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        n = x.shape[-2]
        causal = torch.ones(n, n, dtype=torch.bool).tril()
        weights = torch.einsum("...id,...jd->...ij", q, k).div(math.sqrt(d // self.h))
        weights = weights.masked_fill(~causal, NEG_INF).softmax(-1)
        return self.W_O(out.transpose(-3, -2).flatten(-2)), weights


EXERCISES = [
    Exercise(
        check_grouped_query_attention,
        "MyGroupedQueryAttention",
        mistakes=[
            (grouped_class(share="tile"), "the key/value heads were tiled (repeat)"),
            (grouped_class(scale_by="d_model"), "divided by √d_model = √8, not √d_head = √2"),
            (grouped_class(use_output=False), "W_O is missing"),
            (grouped_class(merge_transpose=False), "put back together without the transpose"),
            (grouped_class(transpose=False), "split without the transpose"),
            (grouped_class(kv_width="full"), "W_K must be nn.Linear(d_model, n_kv_heads"),
            (GroupedWithGqa, Says("the answer uses enable_gqa")),
        ],
        other_styles=[GroupedWithSdpa],
    ),
    Exercise(
        check_causal_multi_head,
        "MyCausalMultiHead",
        mistakes=[
            (fused_class(mask=False), "no causal mask"),
            (fused_class(squeeze=True), "the head axis was squeezed away"),
            (fused_class(average=True), "averaged over the heads"),
            (fused_class(layout="per_head"), "the fused output is [Q | K | V]"),
            (fused_class(scale_by="d_model"), "√d_model"),
            (fused_class(use_output=False), "W_O is missing"),
            (fused_class(mask="after"), "the mask is applied after softmax"),
            (fused_class(layout="no_transpose"), "split without the transpose"),
            (fused_class(diagonal=0), "the mask also hides the diagonal"),
        ],
        other_styles=[FusedWithSdpa],
    ),
]
