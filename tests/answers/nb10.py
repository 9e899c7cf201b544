"""Notebook 10_attention_at_scale: the usual mistakes in its exercises, each with the words
its report must show, and correct answers in other styles than the worked solution."""

from __future__ import annotations

import torch
import torch.nn.functional as F

from nbhelpers.exercises import (
    check_cached_causal_mask,
    check_cached_generate,
    check_merge_partials,
)
from nbhelpers.exercises.at_scale import cached_generate
from nbhelpers.inference import generate
from nbhelpers.masks import causal_mask

from . import Exercise, Says

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
    if mode == "normalised":
        return m, l1 * f1 + l2 * f2, (acc1 * f1 + acc2 * f2) / (l1 * f1 + l2 * f2)
    if mode == "second":  # block 2's maximum as the reference
        return m2, l1 * torch.exp(m1 - m2) + l2, acc1 * torch.exp(m1 - m2) + acc2
    return m, l1 * f1 + l2 * f2, acc1 * f1 + acc2 * f2


def lower_right(n, m, offset=True, cache_visible=True, own_key=True):
    shift = (m - n) if offset else 0
    blocked = torch.ones(n, m, dtype=torch.bool).triu(shift + (1 if own_key else 0))
    if not cache_visible:
        blocked |= torch.arange(m) < m - n
    return torch.zeros(n, m).masked_fill(blocked, NEG_INF)


def sdpa_cache(model, ids, max_new_tokens):
    """Another style: lists of keys and values per block, F.scaled_dot_product_attention with
    an explicit mask for the prompt and none for one new query."""
    keys, values = [[] for _ in model.blocks], [[] for _ in model.blocks]
    out, new = ids, ids
    with torch.no_grad():
        for _ in range(max_new_tokens):
            t, n = len(out) - len(new), len(new)
            h = model.W_e(new) + model.W_p[t : t + n]
            for layer, block in enumerate(model.blocks):
                a = block.attn
                q, k, v = (
                    w(h).view(n, a.n_heads, -1).transpose(0, 1) for w in (a.W_Q, a.W_K, a.W_V)
                )
                keys[layer].append(k)
                values[layer].append(v)
                K, V = torch.cat(keys[layer], 1), torch.cat(values[layer], 1)
                mask = None
                if n > 1:  # the prompt: each position sees itself and the earlier ones
                    mask = torch.ones(n, n, dtype=torch.bool).tril()
                heads = F.scaled_dot_product_attention(q, K, V, attn_mask=mask)
                h = block.add_and_norm(h, a.W_O(heads.transpose(0, 1).reshape(n, -1)))
            new = model.logits(h[-1]).argmax().view(1)
            out = torch.cat([out, new])
    return out


EXERCISES = [
    Exercise(
        check_merge_partials,
        "my_merge_partials",
        mistakes=[
            (lambda *a: merge(*a, mode="none"), "added without rescaling"),
            (lambda *a: merge(*a, mode="normalised"), "acc was divided by l"),
            (lambda *a: merge(*a, mode="second"), "m is the second block's maximum"),
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
            (lambda n, m: torch.full((n, m), NEG_INF).triu(n - m + 1), "the wrong way"),
            (
                lambda n, m: causal_mask(n, m),
                Says("which does what this exercise asks you to build"),
            ),
        ],
        other_styles=[
            lambda n, m: torch.zeros(n, m).masked_fill(
                torch.ones(n, m, dtype=torch.bool).tril(m - n).logical_not(), NEG_INF
            )
        ],
    ),
    Exercise(
        check_cached_generate,
        "my_cached_generate",
        mistakes=[
            (
                lambda *a: cached_generate(*a, mistake="no position offset"),
                "embedded at position 0",
            ),
            (
                lambda *a: cached_generate(*a, mistake="no mask on the prompt"),
                "without the causal mask",
            ),
            (
                lambda *a: cached_generate(*a, mistake="one cache for all blocks"),
                "shared one cache",
            ),
            (lambda *a: cached_generate(*a, mistake="cache not kept"), "were not kept"),
            (lambda *a: cached_generate(*a, mistake="new keys not attended"), "its own key"),
            (lambda *a: cached_generate(*a, mistake="new tokens only"), "only the new tokens"),
            (lambda *a: cached_generate(*a, mistake="only the prompt kept"), "only the prompt's"),
            (lambda *a: cached_generate(*a, mistake="mask aligned top-left"), "aligns"),
            (lambda *a: cached_generate(*a, mistake="scaled by d_model"), "√d_model"),
            (lambda m, i, n: generate(m, i, n, top_k=1), "ran again at every step"),
        ],
        other_styles=[sdpa_cache, lambda m, i, n: generate(m, i, n, top_k=1, cache=True)],
    ),
]
