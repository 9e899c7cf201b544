"""Checkers for notebook 06, embeddings: h_0 = U W_e + W_p at any position, and back to the
tokens."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from ..support.language import tr
from .core import *  # noqa: F403 (the checkers' toolkit: core.__all__)
from .gpt_cases import (
    id_cases,
)


@leaves_state_alone
def check_embed(fn) -> CheckResult:
    """fn(ids, W_e, W_p, start=0) must give h_0 = U W_e + W_p for the n tokens at positions
    start .. start + n - 1: start = 0 for a whole sentence, the number of cached tokens for a
    continuation (notebook 10). The lookup is torch's own nn.Embedding."""
    check_function("fn", fn)
    g = seeded(10)
    cases = []
    for (name, ids, V), start in zip(id_cases(11), (0, 0, 2, 3, 1), strict=True):
        d, n_ctx = 6, 8
        W_e, W_p = randn(g, V, d), randn(g, n_ctx, d)
        n = ids.shape[-1]
        lookup = nn.Embedding.from_pretrained(W_e)(ids)  # torch's own row lookup: U W_e
        rows = W_p[start : start + n]
        cases.append(
            Case(
                name
                + (
                    tr(", at positions {first}..{last}", first=start, last=start + n - 1)
                    if start
                    else ""
                ),
                shapes(ids=ids, W_e=W_e, W_p=W_p) + tr(", ") + f"start = {start}",
                (lambda f, ids=ids, W_e=W_e, W_p=W_p: f(ids, W_e, W_p))
                if start == 0
                else (lambda f, ids=ids, W_e=W_e, W_p=W_p, start=start: f(ids, W_e, W_p, start)),
                lookup + rows,
                mistakes=[
                    (tr("the positions are missing: add W_p[start:start + n]"), lookup),
                    (
                        tr("only the positions: add the token embeddings U W_e"),
                        rows.expand_as(lookup),
                    ),
                    (
                        tr("every position got the same row of W_p: one row per position"),
                        lookup + W_p[start],
                    ),
                    (
                        tr("start is ignored: the tokens sit at positions start .. start + n - 1"),
                        lookup + W_p[:n] if start else None,
                    ),
                    (
                        tr(
                            "the ids were shifted by one: row u of W_e is token u's, and ids "
                            "count from 0"
                        ),
                        W_e[ids - 1] + rows,
                    ),
                    (
                        tr("positions shifted by one: the first token is at position start"),
                        attempt(lambda a=lookup, b=W_p[start + 1 : start + n + 1]: a + b),
                    ),
                ],
            )
        )
    return run_cases(
        "embed",
        fn,
        cases,
        tr("return h_0 for the ids, the first of them at position start."),
    )


@leaves_state_alone
def check_decode_embedding(fn) -> CheckResult:
    """fn(h0, W_e, W_p) must recover the token ids (..., n) from h_0 = U W_e + W_p[:n]: take
    the positions away, then find the nearest row of W_e. The rows of W_e here have different
    lengths and W_p is large, so that neither step can be skipped. The reference is
    torch.cdist's nearest row."""
    check_function("fn", fn)
    g = seeded(24)
    cases = []
    for name, ids, V in id_cases(25):
        d, n_ctx = 6, 8
        lengths = torch.linspace(0.5, 3.0, V)[torch.randperm(V, generator=g)]
        W_e = F.normalize(randn(g, V, d), dim=-1) * lengths[:, None]  # rows of varied length
        W_p = randn(g, n_ctx, d, scale=2.0)
        n = ids.shape[-1]
        h0 = F.embedding(ids, W_e) + W_p[:n]
        x = h0 - W_p[:n]

        def nearest(x, W_e=W_e):
            distances = torch.cdist(x.reshape(-1, x.shape[-1]), W_e)  # (tokens, V)
            return distances.argmin(-1).reshape(x.shape[:-1])

        cases.append(
            Case(
                name,
                shapes(h0=h0, W_e=W_e, W_p=W_p),
                lambda f, h0=h0, W_e=W_e, W_p=W_p: f(h0.clone(), W_e, W_p),
                nearest(x),
                atol=0.0,
                mistakes=[
                    (
                        tr("the positions were not taken away: subtract W_p[:n] from h_0 first"),
                        nearest(h0),
                    ),
                    (
                        tr(
                            "the largest dot product is not the nearest row: a longer row of "
                            "W_e wins it; compare distances, or U W_e itself"
                        ),
                        (x @ W_e.T).argmax(-1),
                    ),
                    (
                        tr(
                            "two steps are missing: subtract W_p[:n] first, then find the "
                            "nearest row of W_e (by distance, not by dot product)"
                        ),
                        (h0 @ W_e.T).argmax(-1),
                    ),
                    (
                        tr(
                            "the positions are shifted by one: subtract W_p[:n], the rows of "
                            "positions 0 .. n - 1"
                        ),
                        nearest(h0 - W_p[1 : n + 1]) if n < n_ctx else None,
                    ),
                    (
                        tr(
                            "the nearest row was searched along the wrong axis: for each "
                            "token, minimise over the n_vocab rows of W_e"
                        ),
                        attempt(
                            lambda x=x, W_e=W_e: torch.cdist(
                                x, W_e.expand(*x.shape[:-2], -1, -1)
                            ).argmin(-2)
                        ),
                    ),
                ],
            )
        )
    return run_cases(
        "decode_embedding",
        fn,
        cases,
        tr("return the token ids that h_0 was made from."),
    )
