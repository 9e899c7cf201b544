"""Checkers for notebook 10, attention at scale: merging partial softmax results, the causal
mask after a cache, and one cached step."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F

from ..support.language import tr
from .core import *  # noqa: F403 (the checkers' toolkit: core.__all__)
from .references import (
    partial_of,
)


@leaves_state_alone
def check_merge_partials(fn) -> CheckResult:
    """fn(m1, l1, acc1, m2, l2, acc2) must merge the partial results of two blocks of keys
    into those of both: m = max(m1, m2), l = l1 e^(m1 - m) + l2 e^(m2 - m), acc the same way;
    acc / l is then attention over all the keys. An empty block (m = -inf, l = 0) must not
    turn the merge into NaN. The reference is F.scaled_dot_product_attention over all the
    keys and torch.logsumexp of all the scores."""
    check_function("fn", fn)
    g = seeded(26)
    cases = []
    for name, batch, n, m1, m2, d, scale, empty in (
        (tr("two blocks of 4 keys"), (), 3, 4, 4, 4, 1.0, False),
        (tr("batched, blocks of 3 and 5"), (2,), 2, 3, 5, 8, 1.0, False),
        (tr("large scores: the second block's maximum is far higher"), (), 2, 3, 3, 4, 6.0, False),
        (tr("an empty block, and a query that sees nothing at all"), (), 3, 4, 2, 4, 1.0, True),
    ):
        Q = randn(g, *batch, n, d, scale=scale)
        K1, K2 = randn(g, *batch, m1, d, scale=scale), randn(g, *batch, m2, d, scale=scale)
        if scale > 1:
            K2 = K2 + Q.mean(-2, keepdim=True)  # the second block scores much higher
        V1, V2 = randn(g, *batch, m1, d), randn(g, *batch, m2, d)
        first = partial_of(Q, K1, V1)
        if empty:
            second = (
                torch.full_like(first[0], NEG_INF),
                torch.zeros_like(first[1]),
                torch.zeros_like(first[2]),
            )
            K, V = K1, V1
        else:
            second = partial_of(Q, K2, V2)
            K, V = torch.cat([K1, K2], -2), torch.cat([V1, V2], -2)
        s = Q @ K.mT / math.sqrt(d)
        m = s.amax(-1, keepdim=True)
        total = torch.exp(torch.logsumexp(s, -1, keepdim=True) - m)
        acc = F.scaled_dot_product_attention(Q, K, V) * total
        if empty:  # query 0 may see no key of the first block either: nothing at all
            first = tuple(t.clone() for t in first)
            for t, value in zip((*first, m, total, acc), (NEG_INF, 0.0, 0.0) * 2, strict=True):
                t[..., 0, :] = value
        (a1, b1, c1), (a2, b2, c2) = first, second
        top = torch.maximum(a1, a2)
        mistakes = [
            (
                tr("the sums were added without rescaling: multiply each by e^(m_i - m) first"),
                (top, b1 + b2, c1 + c2),
            ),
            (
                tr(
                    "rescaled by e^(m - m_i): the factor is e^(m_i - m), at most 1, for the "
                    "block whose maximum was lower"
                ),
                (
                    top,
                    b1 * torch.exp(top - a1) + b2 * torch.exp(top - a2),
                    c1 * torch.exp(top - a1) + c2 * torch.exp(top - a2),
                ),
            ),
            (
                tr("the maximum is a sum: m = max(m1, m2), the larger of the two, not m1 + m2"),
                (
                    a1 + a2,
                    b1 * torch.exp(-a2) + b2 * torch.exp(-a1),  # e^(m_i - (m1 + m2))
                    c1 * torch.exp(-a2) + c2 * torch.exp(-a1),
                ),
            ),
            (
                tr("only l was rescaled: acc needs the same factors as l"),
                (top, b1 * torch.exp(a1 - top) + b2 * torch.exp(a2 - top), c1 + c2),
            ),
            (
                tr(
                    "an empty block made NaN: with m_i = -inf its factor e^(m_i - m) is 0, "
                    "and so is its l_i"
                ),
                (
                    top,
                    b1 * torch.exp(a1 - top) + b2 * torch.exp(a2 - top),
                    c1 * torch.exp(a1 - top) + c2 * torch.exp(a2 - top),
                )
                if empty
                else None,
            ),
        ]
        cases.append(
            Case(
                name,
                shapes(m1=a1, acc1=c1) + tr(", {first} + {second} keys", first=m1, second=m2),
                lambda f, first=first, second=second: f(*first, *second),
                (m, total, acc),
                atol=1e-5,
                mistakes=mistakes,
            )
        )
    return run_cases(
        "merge_partials",
        fn,
        cases,
        tr("return the merged (m, l, acc)."),
    )


@leaves_state_alone
def check_cached_causal_mask(fn) -> CheckResult:
    """fn(n, m) must give the additive (n, m) causal mask for n new queries after m - n cached
    keys: the new tokens sit at positions m - n .. m - 1, so query i sees keys j <= i + m - n.
    The reference is torch.tril with the diagonal moved by m - n, the rule of torch's
    lower-right causal bias (torch.nn.attention.bias.causal_lower_right; the tests compare the
    two, since importing that module here would load torch's compiler stack, seconds)."""
    check_function("fn", fn)
    cases = []
    for name, n, m in (
        (tr("one new token after 4 cached ones"), 1, 5),
        (tr("3 new tokens after 2 cached ones"), 3, 5),
        (tr("no cache: the square mask"), 4, 4),
    ):
        allowed = torch.ones(n, m, dtype=torch.bool).tril(diagonal=m - n)
        cases.append(
            Case(
                name,
                f"n = {n}, m = {m}",
                lambda f, n=n, m=m: f(n, m),
                torch.zeros(n, m).masked_fill(~allowed, NEG_INF),
                atol=0.0,
                mistakes=[
                    (
                        tr(
                            "the offset is missing: new query i sits at position i + m - n, "
                            "so it sees keys j <= i + m - n, the cache included"
                        ),
                        torch.zeros(n, m).masked_fill(
                            torch.ones(n, m, dtype=torch.bool).triu(1), NEG_INF
                        ),
                    ),
                    (
                        tr("the cached keys are hidden: every new token may see the whole cache"),
                        torch.zeros(n, m).masked_fill(
                            torch.ones(n, m, dtype=torch.bool).triu(m - n + 1)
                            | (torch.arange(m) < m - n),
                            NEG_INF,
                        ),
                    ),
                    (
                        tr("off by one: a new token sees its own key, j = i + m - n"),
                        torch.zeros(n, m).masked_fill(
                            torch.ones(n, m, dtype=torch.bool).triu(m - n), NEG_INF
                        ),
                    ),
                    (
                        tr("a boolean mask: the exercise asks for the additive 0 / -inf form"),
                        allowed,
                    ),
                    (
                        tr(
                            "the mask is flipped: 0 where a key may be seen, -inf where it is "
                            "in the future"
                        ),
                        torch.zeros(n, m).masked_fill(allowed, NEG_INF),
                    ),
                ],
            )
        )
    return run_cases(
        "cached_causal_mask",
        fn,
        cases,
        tr("return the (n, m) additive mask of n new queries over m keys."),
    )


@leaves_state_alone
def check_cached_attention_step(fn) -> CheckResult:
    """fn(q, k, v, cache_k, cache_v) handles the new token's q, k, v (..., 1, d) and returns
    (output, new_cache_k, new_cache_v): the new key and value appended to the cache, and the
    output attending over the cache plus the new key."""
    check_function("fn", fn)
    g = seeded(17)
    cases = []
    for name, batch, t, d in (
        (tr("3 cached tokens, d = 4"), (), 3, 4),
        (tr("batched, 2 heads, 5 cached tokens"), (2, 2), 5, 8),
        (tr("an empty cache (the first token)"), (), 0, 4),
    ):
        q, k, v = (randn(g, *batch, 1, d) for _ in range(3))
        cache_k, cache_v = randn(g, *batch, t, d), randn(g, *batch, t, d)
        K, V = torch.cat([cache_k, k], -2), torch.cat([cache_v, v], -2)
        expected = (F.scaled_dot_product_attention(q, K, V), K, V)
        mistakes = [
            (
                tr("the new key is not attended to: append k and v to the cache before attending"),
                (F.scaled_dot_product_attention(q, cache_k, cache_v), K, V) if t else None,
            ),
            (
                tr("the new key and value go at the end of the cache, after the earlier positions"),
                (
                    F.scaled_dot_product_attention(q, K, V),
                    torch.cat([k, cache_k], -2),
                    torch.cat([v, cache_v], -2),
                )
                if t
                else None,
            ),
            (
                tr("the cache was not extended: return the caches with the new k and v appended"),
                (expected[0], cache_k, cache_v),
            ),
            (tr("the scores are not divided by √d"), (F.softmax(q @ K.mT, -1) @ V, K, V)),
            (
                tr(
                    "is_causal=True lines its mask up with the top left: one new query then "
                    "sees only the first key. The new token comes after every cached one and "
                    "may see them all: no mask here (or the offset mask of Exercise 3)"
                ),
                (F.scaled_dot_product_attention(q, K, V, is_causal=True), K, V) if t else None,
            ),
        ]
        cases.append(
            Case(
                name,
                shapes(q=q, cache_k=cache_k),
                lambda f, q=q, k=k, v=v, ck=cache_k, cv=cache_v: f(q, k, v, ck, cv),
                expected,
                mistakes=mistakes,
            )
        )
    return run_cases(
        "cached_attention_step",
        fn,
        cases,
        tr("return (output, new cache_k, new cache_v)."),
    )
