"""Checkers for notebook 05, multi-head attention: grouped-query (query heads sharing key/value
heads), and causal with one fused W_QKV."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

from ..support.language import tr
from .core import *  # noqa: F403 (the checkers' toolkit: core.__all__)


@leaves_state_alone
def check_grouped_query_attention(cls) -> CheckResult:
    """cls(d_model, n_heads, n_kv_heads) has W_Q and W_O (nn.Linear(d_model, d_model)) and W_K,
    W_V (nn.Linear(d_model, n_kv_heads * d_head)); forward(x) is unmasked self-attention in
    which query head r uses key/value head r // group, group = n_heads / n_kv_heads. The
    reference is F.scaled_dot_product_attention(enable_gqa=True) on the answer's projections,
    and, where n_kv_heads = n_heads, nn.MultiheadAttention with the answer's weights copied
    in."""
    check_class("cls", cls)
    if (refused := refusing_names("GroupedQueryAttention", cls, ["enable_gqa"])) is not None:
        return refused
    g = seeded(8)
    cases = []
    for name, d_model, h, h_kv, shape in (
        (tr("d_model = 8, 4 heads sharing 2 key/value heads, one sentence"), 8, 4, 2, (5, 8)),
        (tr("d_model = 12, 6 heads sharing 2 key/value heads, batched"), 12, 6, 2, (2, 3, 12)),
        (tr("d_model = 8, 4 heads sharing 1 key/value head"), 8, 4, 1, (4, 8)),
        (tr("d_model = 6, 2 heads, each with its own key/value head"), 6, 2, 2, (4, 6)),
    ):
        x = randn(g, *shape)

        def run(answer, d_model=d_model, h=h, h_kv=h_kv, x=x):
            module = build(answer, d_model, h, h_kv)
            W = linear_weights(module, "W_Q", "W_K", "W_V", "W_O")
            d_head = d_model // h
            for key in ("W_K", "W_V"):
                if W[key].out_features != h_kv * d_head:
                    raise Rejected(
                        tr("{name} has the wrong size", name=key),
                        tr(
                            "{name} must be nn.Linear(d_model, n_kv_heads * d_head) = "
                            "nn.Linear({d_model}, {width}): one d_head-wide slice per key/value "
                            "head, got out_features={out_features}",
                            name=key,
                            d_model=d_model,
                            width=h_kv * d_head,
                            out_features=W[key].out_features,
                        ),
                    )
            with torch.no_grad():
                got = module(x)
                if h_kv == h:
                    expected = torch_multi_head(x, W, h)
                else:
                    Q, K, V = split_projections(x, W, h, h_kv)
                    heads = F.scaled_dot_product_attention(Q, K, V, enable_gqa=True)
                    expected = W["W_O"](heads.transpose(-3, -2).flatten(-2))
                mistakes = grouped_query_mistakes(x, W, h, h_kv)
            return got, expected, mistakes

        cases.append(
            Case(name, shapes(x=x) + f", n_heads = {h}, n_kv_heads = {h_kv}", run, derived=True)
        )
    return run_cases(
        "GroupedQueryAttention",
        cls,
        cases,
        tr("build W_Q, W_K, W_V, W_O and let each group of query heads share one key/value head."),
    )


def torch_multi_head(x, W, h):
    """nn.MultiheadAttention with the answer's four projections copied in: n_kv = n_h."""
    d_model = x.shape[-1]
    reference = nn.MultiheadAttention(d_model, h, bias=True, batch_first=True)
    projections = [W[k] for k in ("W_Q", "W_K", "W_V")]
    reference.in_proj_weight.copy_(torch.cat([p.weight for p in projections]))
    reference.in_proj_bias.copy_(torch.cat([bias_of(p) for p in projections]))
    reference.out_proj.weight.copy_(W["W_O"].weight)
    reference.out_proj.bias.copy_(bias_of(W["W_O"]))
    batched = x if x.dim() == 3 else x.unsqueeze(0)
    expected = reference(batched, batched, batched, need_weights=False)[0]
    return expected if x.dim() == 3 else expected.squeeze(0)


def split_projections(x, W, h, h_kv):
    """Q (..., n_h, n, d_head) and K, V (..., n_kv, n, d_head), split as the exercise asks."""
    d_head = x.shape[-1] // h

    def heads(t, count):  # (..., n, count * d_head) -> (..., count, n, d_head)
        return t.unflatten(-1, (count, d_head)).transpose(-3, -2)

    return heads(W["W_Q"](x), h), heads(W["W_K"](x), h_kv), heads(W["W_V"](x), h_kv)


def grouped_query_mistakes(x, W, h, h_kv):
    d_model = x.shape[-1]
    d_head = d_model // h
    group = h // h_kv
    Q, K, V = split_projections(x, W, h, h_kv)
    K_shared, V_shared = (t.repeat_interleave(group, dim=-3) for t in (K, V))  # r -> r // group

    def merge(t):  # (..., n_h, n, d_head) -> (..., n, d_model)
        return t.transpose(-3, -2).flatten(-2)

    def attend(Q, K, V, divisor=None):
        divisor = math.sqrt(d_head) if divisor is None else divisor
        return F.softmax(Q @ K.mT / divisor, dim=-1) @ V

    n = x.shape[-2]
    unsplit = W["W_Q"](x).reshape(*x.shape[:-2], h, n, d_head)  # split without the transpose
    kv_unsplit = [W[k](x).reshape(*x.shape[:-2], h_kv, n, d_head) for k in ("W_K", "W_V")]
    return [
        (
            tr(
                "query head r uses key/value head r % n_kv_heads: the key/value heads were "
                "tiled (repeat), not repeated in place; with group = n_heads // n_kv_heads, "
                "query heads 0..group-1 share key/value head 0, so head r uses head r // group "
                "(repeat_interleave(group, dim=-3))"
            ),
            W["W_O"](merge(attend(Q, *(torch.cat([t] * group, dim=-3) for t in (K, V)))))
            if 1 < h_kv < h
            else None,
        ),
        (
            tr(
                "the scores look divided by √d_model = √{d_model}, not √d_head = √{d_head}",
                d_model=d_model,
                d_head=d_head,
            ),
            W["W_O"](merge(attend(Q, K_shared, V_shared, math.sqrt(d_model)))),
        ),
        (
            tr("W_O is missing: MultiHead(X) = Concat(head_0..head_{n_h-1}) W_O"),
            merge(attend(Q, K_shared, V_shared)),
        ),
        (
            tr("the heads were split without the transpose"),
            W["W_O"](
                merge(attend(unsplit, *(t.repeat_interleave(group, dim=-3) for t in kv_unsplit)))
            )
            if h > 1
            else None,
        ),
        (
            tr(
                "the heads were put back together without the transpose: (..., n_h, n, "
                "d_head) -> transpose(-3, -2) -> (..., n, n_h, d_head), then flatten"
            ),
            W["W_O"](attend(Q, K_shared, V_shared).reshape(*x.shape)),
        ),
    ]


@leaves_state_alone
def check_causal_multi_head(cls) -> CheckResult:
    """cls(d_model, n_heads) has W_QKV = nn.Linear(d_model, 3 d_model), whose output is
    [Q | K | V], and W_O = nn.Linear(d_model, d_model); forward(x) returns (output, weights)
    of causal multi-head self-attention, the weights per head, (..., n_h, n, n). The
    reference is nn.MultiheadAttention, whose in_proj is the same fused [W_Q; W_K; W_V], with
    the answer's weights copied in and a causal attn_mask."""
    check_class("cls", cls)
    g = seeded(9)
    cases = []
    for name, d_model, h, shape in (
        (tr("d_model = 8, 2 heads, one sentence"), 8, 2, (5, 8)),
        (tr("d_model = 12, 3 heads, batched"), 12, 3, (2, 4, 12)),
        (tr("d_model = 6, 1 head"), 6, 1, (4, 6)),
    ):
        x = randn(g, *shape)

        def run(answer, d_model=d_model, h=h, x=x):
            module = build(answer, d_model, h)
            W = linear_weights(module, "W_QKV", "W_O")
            if W["W_QKV"].out_features != 3 * d_model:
                raise AttributeError(
                    tr(
                        "W_QKV must be nn.Linear(d_model, 3 * d_model) = nn.Linear({d_model}, "
                        "{three_d_model}), got out_features={out_features}",
                        d_model=d_model,
                        three_d_model=3 * d_model,
                        out_features=W["W_QKV"].out_features,
                    )
                )
            n = x.shape[-2]
            blocked = torch.ones(n, n, dtype=torch.bool).triu(1)
            reference = nn.MultiheadAttention(d_model, h, batch_first=True)
            with torch.no_grad():
                reference.in_proj_weight.copy_(W["W_QKV"].weight)
                reference.in_proj_bias.copy_(bias_of(W["W_QKV"]))
                reference.out_proj.weight.copy_(W["W_O"].weight)
                reference.out_proj.bias.copy_(bias_of(W["W_O"]))
                got = module(x)
                batched = x if x.dim() == 3 else x.unsqueeze(0)

                def mha(**kwargs):
                    out, weights = reference(batched, batched, batched, need_weights=True, **kwargs)
                    if x.dim() == 2:
                        out, weights = out.squeeze(0), weights.squeeze(0)
                    return out, weights

                expected = mha(attn_mask=blocked, average_attn_weights=False)
                mistakes = [
                    (
                        tr("no causal mask: each query sees the future"),
                        mha(average_attn_weights=False),
                    ),
                    (
                        tr(
                            "the head axis was squeezed away: with one head the weights are "
                            "still (..., 1, n, n)"
                        ),
                        (expected[0], expected[1].squeeze(-3)),
                    ),
                    (
                        tr(
                            "the weights are averaged over the heads: return them per head, "
                            "(..., n_h, n, n)"
                        ),
                        mha(attn_mask=blocked, average_attn_weights=True),
                    ),
                    *fused_mistakes(x, W, h, blocked),
                ]
            return got, expected, mistakes

        cases.append(Case(name, shapes(x=x) + f", n_heads = {h}", run, derived=True))
    return run_cases(
        "CausalMultiHead",
        cls,
        cases,
        tr("build W_QKV and W_O; return the output and the weights of each head."),
    )


def fused_mistakes(x, W, h, blocked):
    d_model = x.shape[-1]
    d_head = d_model // h
    qkv = W["W_QKV"](x)

    def heads(t):  # (..., n, d_model) -> (..., n_h, n, d_head)
        return t.unflatten(-1, (h, d_head)).transpose(-3, -2)

    def finish(Q, K, V, divisor):
        weights = F.softmax((Q @ K.mT / divisor).masked_fill(blocked, NEG_INF), dim=-1)
        out = W["W_O"]((weights @ V).transpose(-3, -2).flatten(-2))
        return out, weights

    Q, K, V = (heads(t) for t in qkv.split(d_model, dim=-1))
    # [q k v] side by side within each head: the layout of a (n, n_h, 3 d_head) view
    per_head = qkv.unflatten(-1, (h, 3 * d_head)).transpose(-3, -2)
    q2, k2, v2 = per_head.split(d_head, dim=-1)
    n = x.shape[-2]
    # (..., n, d_model) read as (..., n_h, n, d_head): the heads split without the transpose
    flat = [t.reshape(*x.shape[:-2], h, n, d_head) for t in qkv.split(d_model, dim=-1)]
    after = F.softmax(Q @ K.mT / math.sqrt(d_head), dim=-1).masked_fill(blocked, 0.0)
    diagonal = torch.ones_like(blocked).triu(0)  # the diagonal hidden too
    hides_self = F.softmax((Q @ K.mT / math.sqrt(d_head)).masked_fill(diagonal, NEG_INF), -1)
    return [
        (
            tr(
                "the mask is applied after softmax: add -inf to the scores before softmax, "
                "so that each row renormalises over the keys it may see"
            ),
            (W["W_O"]((after @ V).transpose(-3, -2).flatten(-2)), after),
        ),
        (
            tr("the heads were split without the transpose"),
            finish(*flat, math.sqrt(d_head)) if h > 1 else None,
        ),
        (
            tr(
                "the mask also hides the diagonal: a query may see its own key, so mask only "
                "j > i (triu(1), not triu(0)); the first query then sees nothing and gives NaN"
            ),
            (W["W_O"]((hides_self @ V).transpose(-3, -2).flatten(-2)), hides_self),
        ),
        (
            tr(
                "the scores look divided by √d_model = √{d_model}, not √d_head = √{d_head}",
                d_model=d_model,
                d_head=d_head,
            ),
            finish(Q, K, V, math.sqrt(d_model)),
        ),
        (
            tr(
                "the fused output is [Q | K | V], each d_model wide: split it into three "
                "(split(d_model, dim=-1)) before splitting each into heads"
            ),
            finish(q2, k2, v2, math.sqrt(d_head)) if h > 1 else None,
        ),
        (
            tr("W_O is missing: MultiHead(X) = Concat(head_0..head_{n_h-1}) W_O"),
            (
                (F.softmax((Q @ K.mT / math.sqrt(d_head)).masked_fill(blocked, NEG_INF), -1) @ V)
                .transpose(-3, -2)
                .flatten(-2),
                finish(Q, K, V, math.sqrt(d_head))[1],
            ),
        ),
    ]
