"""Checkers for notebook 10: attention block by block (online softmax) and one cached step."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch.utils._python_dispatch import TorchDispatchMode

from ..support.language import tr
from .core import Case, CheckResult, Rejected, check_function, randn, run_cases, seeded, shapes


class LargestTensor(TorchDispatchMode):
    """Records the shape of every tensor an operation creates, to tell whether a function
    ever held a full (n, m) matrix of scores or weights."""

    def __init__(self):
        super().__init__()
        self.shapes: list[tuple[int, ...]] = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        for tensor in out if isinstance(out, (tuple, list)) else (out,):
            if isinstance(tensor, torch.Tensor):
                self.shapes.append(tuple(tensor.shape))
        return out


def holds_full_matrix(shapes_seen, n: int, m: int) -> bool:
    return any(len(s) >= 2 and s[-2] == n and s[-1] == m for s in shapes_seen)


def naive_blocks_without_max(Q, K, V, block_size):
    """Blocks of exp(scores) summed without a running maximum: overflows at large scores."""
    scale = 1 / math.sqrt(Q.shape[-1])
    numerator = torch.zeros(*Q.shape[:-1], V.shape[-1], dtype=Q.dtype)
    denominator = torch.zeros(*Q.shape[:-1], 1, dtype=Q.dtype)
    for start in range(0, K.shape[-2], block_size):
        e = torch.exp(Q @ K[..., start : start + block_size, :].mT * scale)
        numerator = numerator + e @ V[..., start : start + block_size, :]
        denominator = denominator + e.sum(-1, keepdim=True)
    return numerator / denominator


def blocks_without_rescaling(Q, K, V, block_size):
    """A running maximum, but the earlier sums are not rescaled when it grows."""
    return online_reference(Q, K, V, block_size, rescale=False)


def check_online_softmax_attention(fn) -> CheckResult:
    """fn(Q, K, V, block_size) must compute softmax(Q Kᵀ / √d_k) V block by block over the
    keys, with a running maximum and sum, never the full (n, m) weights. Compared with
    F.scaled_dot_product_attention, with scores large enough to overflow without the
    running maximum."""
    check_function("fn", fn)
    g = seeded(16)
    cases = []
    overflowing = tr("large scores (exp overflows without the running maximum)")
    for name, batch, n, m, d_k, d_v, block, scale, growing in (
        (tr("n = 4, m = 12, blocks of 4"), (), 4, 12, 8, 3, 4, 1.0, False),
        (tr("batched, m = 10 (a last, shorter block of 3)"), (2,), 3, 10, 4, 5, 3, 1.0, False),
        (overflowing, (), 4, 8, 8, 2, 2, 40.0, False),
        (tr("the maximum grows from block to block"), (), 3, 9, 4, 4, 3, 8.0, True),
    ):
        Q = randn(g, *batch, n, d_k, scale=scale)
        K = randn(g, *batch, m, d_k, scale=scale)
        if growing:
            K = K * torch.linspace(0.1, 2.0, m).unsqueeze(-1)  # later keys score higher
        V = randn(g, *batch, m, d_v)

        def run(answer, Q=Q, K=K, V=V, block=block, n=n, m=m):
            with LargestTensor() as seen:
                got = answer(Q, K, V, block)
            if holds_full_matrix(seen.shapes, n, m):
                raise Rejected(
                    tr("the answer built a full ({n}, {m}) matrix of scores or weights", n=n, m=m),
                    tr(
                        "work on blocks of {block} keys at a time, with a running max and sum",
                        block=block,
                    ),
                )
            return (
                got,
                expected_of(Q, K, V),
                [
                    (
                        tr("exp overflows: keep a running maximum of the scores and subtract it"),
                        naive_blocks_without_max(Q, K, V, block),
                    ),
                    (
                        tr(
                            "when the running maximum grows, rescale the earlier sums by "
                            "exp(old max - new max)"
                        ),
                        blocks_without_rescaling(Q, K, V, block),
                    ),
                    (
                        tr("the scores are not divided by √d_k"),
                        online_reference(Q * math.sqrt(Q.shape[-1]), K, V, block),
                    ),
                ],
            )

        cases.append(
            Case(name, shapes(Q=Q, K=K, V=V) + f", block_size = {block}", run, derived=True)
        )
    return run_cases(
        "online_softmax_attention",
        fn,
        cases,
        tr("Replace raise NotImplementedError: attend one block of keys at a time."),
    )


def expected_of(Q, K, V):
    return F.scaled_dot_product_attention(Q, K, V)


def online_reference(Q, K, V, block, *, rescale: bool = True):
    """Block-by-block attention with a running maximum, used here only to build mistaken
    variants (the reference of the checks is F.scaled_dot_product_attention)."""
    scale = 1 / math.sqrt(Q.shape[-1])
    running = torch.full((*Q.shape[:-1], 1), -math.inf, dtype=Q.dtype)
    numerator = torch.zeros(*Q.shape[:-1], V.shape[-1], dtype=Q.dtype)
    denominator = torch.zeros(*Q.shape[:-1], 1, dtype=Q.dtype)
    for start in range(0, K.shape[-2], block):
        s = Q @ K[..., start : start + block, :].mT * scale
        new = torch.maximum(running, s.amax(-1, keepdim=True))
        shrink = torch.exp(running - new) if rescale else torch.ones_like(new)
        e = torch.exp(s - new)
        numerator = numerator * shrink + e @ V[..., start : start + block, :]
        denominator = denominator * shrink + e.sum(-1, keepdim=True)
        running = new
    return numerator / denominator


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
        tr("Replace raise NotImplementedError: return (output, new cache_k, new cache_v)."),
    )
