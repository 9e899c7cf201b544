"""Notebook 10_attention_at_scale: the usual mistakes in its exercises, each with the words
its report must show, and correct answers in other styles than the worked solution."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F

from nbhelpers.exercises import (
    check_cached_attention_step,
    check_cached_causal_mask,
    check_merge_partials,
)

from . import Exercise

NEG_INF = float("-inf")


def merge(m1, l1, acc1, m2, l2, acc2, mode="right"):
    m = m1 + m2 if mode == "sum" else torch.maximum(m1, m2)
    if mode == "none":
        return m, l1 + l2, acc1 + acc2
    if mode == "inverted":
        f1, f2 = torch.exp(m - m1), torch.exp(m - m2)
    else:
        f1, f2 = torch.exp(m1 - m), torch.exp(m2 - m)
    if mode == "l_only":
        return m, l1 * f1 + l2 * f2, acc1 + acc2
    return m, l1 * f1 + l2 * f2, acc1 * f1 + acc2 * f2


def lower_right(n, m, offset=True, cache_visible=True, own_key=True):
    shift = (m - n) if offset else 0
    blocked = torch.ones(n, m, dtype=torch.bool).triu(shift + (1 if own_key else 0))
    if not cache_visible:
        blocked |= torch.arange(m) < m - n
    return torch.zeros(n, m).masked_fill(blocked, NEG_INF)


def step(q, k, v, cache_k, cache_v, order="after", extend=True, attend_new=True, scale=True):
    keys = torch.cat([cache_k, k] if order == "after" else [k, cache_k], -2)
    values = torch.cat([cache_v, v] if order == "after" else [v, cache_v], -2)
    seen_k, seen_v = (keys, values) if attend_new else (cache_k, cache_v)
    factor = math.sqrt(q.shape[-1]) if scale else 1.0
    out = F.softmax(q @ seen_k.transpose(-2, -1) / factor, -1) @ seen_v
    return (out, keys, values) if extend else (out, cache_k, cache_v)


EXERCISES = [
    Exercise(
        check_merge_partials,
        "my_merge_partials",
        mistakes=[
            (lambda *a: merge(*a, mode="none"), "added without rescaling"),
            (lambda *a: merge(*a, mode="inverted"), "rescaled by e^(m - m_i)"),
            (lambda *a: merge(*a, mode="l_only"), "only l was rescaled"),
            (lambda *a: merge(*a, mode="sum"), "the maximum is a sum"),
            (lambda *a: merge(*a, mode="naive"), "an empty block made NaN"),
        ],
        other_styles=[
            lambda m1, l1, a1, m2, l2, a2: (
                merge(m1, l1, a1, m2, l2, a2, mode="right")
                if not torch.isneginf(torch.maximum(m1, m2)).any()
                else (
                    torch.maximum(m1, m2),
                    *[torch.nan_to_num(t, nan=0.0) for t in merge(m1, l1, a1, m2, l2, a2)[1:]],
                )
            )
        ],
    ),
    Exercise(
        check_cached_causal_mask,
        "my_cached_causal_mask",
        mistakes=[
            (lambda n, m: lower_right(n, m, offset=False), "the offset is missing"),
            (lambda n, m: lower_right(n, m, cache_visible=False), "the cached keys are hidden"),
            (lambda n, m: lower_right(n, m, own_key=False), "off by one"),
            (lambda n, m: torch.isfinite(lower_right(n, m)), "a boolean mask"),
            (
                lambda n, m: torch.zeros(n, m).masked_fill(lower_right(n, m) == 0, NEG_INF),
                "the mask is flipped",
            ),
        ],
        other_styles=[
            lambda n, m: torch.zeros(n, m).masked_fill(
                torch.ones(n, m, dtype=torch.bool).tril(m - n).logical_not(), NEG_INF
            )
        ],
    ),
    Exercise(
        check_cached_attention_step,
        "my_cached_attention_step",
        mistakes=[
            (lambda *a: step(*a, attend_new=False), "the new key is not attended to"),
            (lambda *a: step(*a, order="before"), "at the end of the cache"),
            (lambda *a: step(*a, extend=False), "the cache was not extended"),
            (lambda *a: step(*a, scale=False), "not divided by √d"),
            (
                lambda q, k, v, ck, cv: (
                    F.scaled_dot_product_attention(
                        q, torch.cat([ck, k], -2), torch.cat([cv, v], -2), is_causal=True
                    ),
                    torch.cat([ck, k], -2),
                    torch.cat([cv, v], -2),
                ),
                "is_causal=True lines its mask up with the top left",
            ),
        ],
        other_styles=[],
    ),
]
