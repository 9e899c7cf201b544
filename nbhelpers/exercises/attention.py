"""Checkers for the attention exercises of notebooks 01-05, each against torch's own functions."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

from ..support.language import tr
from .core import Case, CheckResult, check_class, check_function, randn, run_cases, seeded, shapes

NEG_INF = float("-inf")


def attempt(fn, *args):
    """fn(*args), or None when a mistaken variant cannot run on these inputs."""
    try:
        return fn(*args)
    except Exception:
        return None


# --- 01: similarity scores -------------------------------------------------------------------


def check_similarity_scores(fn) -> CheckResult:
    """fn(Q, K) must give Q Kᵀ / √d_k: (..., n, d_k), (..., m, d_k) -> (..., n, m)."""
    check_function("fn", fn)
    g = seeded(1)
    cases = []
    for name, batch, n, m, d_k, dtype in (
        (tr("n ≠ m, batched"), (2,), 3, 6, 4, torch.float32),
        (tr("one sentence, n = m"), (), 5, 5, 8, torch.float32),
        (tr("two batch dims, d_k = 16"), (2, 3), 4, 2, 16, torch.float32),
        ("float64", (2,), 3, 4, 8, torch.float64),
    ):
        Q, K = randn(g, *batch, n, d_k, dtype=dtype), randn(g, *batch, m, d_k, dtype=dtype)
        product = Q @ K.transpose(-2, -1)
        cases.append(
            Case(
                name,
                shapes(Q=Q, K=K),
                lambda f, Q=Q, K=K: f(Q, K),
                torch.matmul(Q, K.mT) / math.sqrt(d_k),
                mistakes=[
                    (
                        tr("the scores are not divided by √d_k: divide Q Kᵀ by math.sqrt(d_k)"),
                        product,
                    ),
                    (tr("the scores look divided by d_k, not √d_k"), product / d_k),
                    (
                        tr("the scores look divided by √m (the number of keys), not √d_k"),
                        product / math.sqrt(m),
                    ),
                    (
                        tr("the scores look divided by √n (the number of queries), not √d_k"),
                        product / math.sqrt(n),
                    ),
                    (
                        tr(
                            "this is K Qᵀ: rows are queries and columns keys, "
                            "Q @ K.transpose(-2, -1)"
                        ),
                        product.transpose(-2, -1) / math.sqrt(d_k),
                    ),
                ],
            )
        )
    return run_cases(
        "similarity_scores",
        fn,
        cases,
        tr("Replace raise NotImplementedError: return the (..., n, m) scores Q Kᵀ / √d_k."),
    )


# --- 02: softmax -----------------------------------------------------------------------------


def check_softmax(fn) -> CheckResult:
    """fn(scores) must be a row-wise softmax over the last axis: stable at ±1000, and a row
    that is all -inf gives zeros, never NaN."""
    check_function("fn", fn)
    g = seeded(2)
    blocked = torch.tensor([[0.5, -1.0, 2.0], [NEG_INF, NEG_INF, NEG_INF], [1.0, NEG_INF, 0.0]])
    inputs = [
        (tr("a 4 x 6 matrix"), randn(g, 4, 6)),
        (tr("batched (2, 3, 5)"), randn(g, 2, 3, 5)),
        ("float64", randn(g, 3, 4, dtype=torch.float64)),
        (
            tr("large scores ±1000"),
            torch.tensor([[1000.0, 999.0, 998.0], [-1000.0, -1001.0, -999.0]]),
        ),
        (tr("a fully masked row (all -inf)"), blocked),
    ]
    cases = []
    for name, scores in inputs:
        reference = F.softmax(scores, dim=-1).nan_to_num(0.0)  # torch gives NaN for all -inf
        exps = torch.exp(scores)
        cases.append(
            Case(
                name,
                shapes(scores=scores),
                lambda f, s=scores: f(s.clone()),
                reference,
                atol=1e-6 if scores.dtype == torch.float32 else 1e-12,
                mistakes=[
                    (
                        tr(
                            "the rows do not sum to 1: softmax over the wrong axis? Sum over dim=-1"
                        ),
                        attempt(lambda s: F.softmax(s, dim=0), scores),
                    ),
                    (
                        tr(
                            "the rows do not sum to 1: softmax over the wrong axis? Sum over dim=-1"
                        ),
                        attempt(lambda s: F.softmax(s, dim=-2), scores),
                    ),
                    (
                        tr(
                            "a row that is all -inf must give zeros, not NaN (0/0): "
                            "treat its maximum as 0 and divide only where the sum is positive"
                        ),
                        F.softmax(scores, dim=-1),
                    ),
                    (
                        tr("exp overflows at large scores: subtract each row's maximum first"),
                        exps / exps.sum(-1, keepdim=True),
                    ),
                    (
                        tr("the exponentials are not normalised: divide by their sum over the row"),
                        torch.exp(scores - scores.amax(-1, keepdim=True).nan_to_num(0.0)),
                    ),
                ],
            )
        )
    return run_cases(
        "softmax",
        fn,
        cases,
        tr("Replace raise NotImplementedError: return the row-wise softmax over the last axis."),
    )


# --- 03: attention and a self-attention module ----------------------------------------------


def qkv_cases(seed: int, *, masks: bool):
    """(name, Q, K, V, additive mask or None) with n ≠ m and d_k ≠ d_v."""
    g = seeded(seed)
    out = [
        (
            tr("one sentence, n = m = 5, d_k = 8, d_v = 3"),
            randn(g, 5, 8),
            randn(g, 5, 8),
            randn(g, 5, 3),
            None,
        ),
        (
            tr("n = 3 ≠ m = 6, batched"),
            randn(g, 2, 3, 4),
            randn(g, 2, 6, 4),
            randn(g, 2, 6, 5),
            None,
        ),
        (
            "float64",
            randn(g, 4, 6, dtype=torch.float64),
            randn(g, 4, 6, dtype=torch.float64),
            randn(g, 4, 2, dtype=torch.float64),
            None,
        ),
        (
            tr("large scores"),
            randn(g, 4, 8, scale=30.0),
            randn(g, 4, 8, scale=30.0),
            randn(g, 4, 3),
            None,
        ),
    ]
    if masks:
        n = 5
        causal = torch.zeros(n, n).masked_fill(torch.ones(n, n, dtype=torch.bool).triu(1), NEG_INF)
        padding = torch.zeros(2, 1, 4)
        padding[1, :, 2:] = NEG_INF  # sentence 2 has 2 real keys
        out += [
            (tr("an additive causal mask"), randn(g, n, 4), randn(g, n, 4), randn(g, n, 3), causal),
            (
                tr("a padding mask per sentence"),
                randn(g, 2, 4, 4),
                randn(g, 2, 4, 4),
                randn(g, 2, 4, 6),
                padding,
            ),
        ]
    return out


def reference_attention(Q, K, V, mask=None):
    """(output, weights) from torch: F.scaled_dot_product_attention and F.softmax."""
    scores = Q @ K.mT / math.sqrt(Q.shape[-1]) + (0 if mask is None else mask)
    weights = F.softmax(scores, dim=-1)
    output = F.scaled_dot_product_attention(Q, K, V, attn_mask=mask)
    return output, weights


def attention_mistakes(Q, K, V, mask):
    d_k = Q.shape[-1]
    added = 0 if mask is None else mask
    scores = Q @ K.mT

    def pair(weights):
        return weights @ V, weights

    found = [
        (tr("the scores are not divided by √d_k"), pair(F.softmax(scores + added, dim=-1))),
        (
            tr("the rows of the weights do not sum to 1: softmax over the wrong axis? Use dim=-1"),
            attempt(lambda: pair(F.softmax(scores / math.sqrt(d_k) + added, dim=-2))),
        ),
        (
            tr("the scores look divided by d_k, not √d_k"),
            pair(F.softmax(scores / d_k + added, dim=-1)),
        ),
    ]
    if mask is not None:
        found += [
            (
                tr("the mask is ignored: add it to the scores before softmax"),
                pair(F.softmax(scores / math.sqrt(d_k), dim=-1)),
            ),
            (
                tr(
                    "the mask is applied after softmax: add it to the scores before, "
                    "so that softmax renormalises over the allowed keys"
                ),
                attempt(
                    lambda: pair(
                        F.softmax(scores / math.sqrt(d_k), dim=-1) * (mask == 0).to(Q.dtype)
                    )
                ),
            ),
        ]
    return found


def check_attention(fn) -> CheckResult:
    """fn(Q, K, V, mask=None) must return (softmax(Q Kᵀ / √d_k + M) V, the weights), with
    an additive mask M."""
    check_function("fn", fn)
    cases = []
    for name, Q, K, V, mask in qkv_cases(3, masks=True):
        described = shapes(Q=Q, K=K, V=V) + ("" if mask is None else f", mask {tuple(mask.shape)}")
        cases.append(
            Case(
                name,
                described,
                (lambda f, Q=Q, K=K, V=V: f(Q, K, V))
                if mask is None
                else (lambda f, Q=Q, K=K, V=V, mask=mask: f(Q, K, V, mask)),
                reference_attention(Q, K, V, mask),
                atol=1e-5 if Q.dtype == torch.float32 else 1e-10,
                mistakes=attention_mistakes(Q, K, V, mask),
            )
        )
    return run_cases(
        "attention",
        fn,
        cases,
        tr("Replace raise NotImplementedError: return (softmax(Q Kᵀ / √d_k + M) V, the weights)."),
    )


def build(cls, *args):
    """cls(*args) with torch's default initialisation seeded, so reports are stable."""
    torch.manual_seed(0)
    return cls(*args)


def linear_weights(module: nn.Module, *names: str) -> dict[str, nn.Linear]:
    """The module's nn.Linear attributes, or a clear error naming the missing one."""
    found = {}
    for name in names:
        layer = getattr(module, name, None)
        if not isinstance(layer, nn.Linear):
            raise AttributeError(
                f"{type(module).__name__} needs an attribute {name} that is an nn.Linear, got "
                f"{type(layer).__name__}"
            )
        found[name] = layer
    return found


def check_self_attention(cls) -> CheckResult:
    """cls(d_model, d_k) is an nn.Module with W_Q, W_K, W_V (each nn.Linear(d_model, d_k));
    forward(X) returns the attended output (..., n, d_k). The reference is
    F.scaled_dot_product_attention on the answer's own projections: only the wiring is
    checked, not the random initialisation."""
    check_class("cls", cls)
    g = seeded(4)
    cases = []
    for name, d_model, d_k, shape in (
        (tr("d_model = 8, d_k = 4, one sentence"), 8, 4, (5, 8)),
        (tr("d_model = 6, d_k = 3, batched"), 6, 3, (2, 4, 6)),
        ("d_model = 12, d_k = 12", 12, 12, (3, 12)),
    ):
        X = randn(g, *shape)

        def run(answer, d_model=d_model, d_k=d_k, X=X):
            module = build(answer, d_model, d_k)
            W = linear_weights(module, "W_Q", "W_K", "W_V")
            with torch.no_grad():
                got = module(X)
                Q, K, V = (W[name](X) for name in ("W_Q", "W_K", "W_V"))
                expected = F.scaled_dot_product_attention(Q, K, V)
                scores = Q @ K.mT
                mistakes = [
                    (
                        tr(
                            "the scores look divided by √d_model = √{d_model}, not √d_k = √{d_k}",
                            d_model=d_model,
                            d_k=d_k,
                        ),
                        F.softmax(scores / math.sqrt(d_model), dim=-1) @ V,
                    ),
                    (tr("the scores are not divided by √d_k"), F.softmax(scores, dim=-1) @ V),
                    (
                        tr("the values are X itself: project them with W_V first"),
                        attempt(lambda: F.scaled_dot_product_attention(Q, K, X)),
                    ),
                    (
                        tr("softmax over the wrong axis: the weights of each query must sum to 1"),
                        F.softmax(scores / math.sqrt(d_k), dim=-2) @ V,
                    ),
                ]
            return got, expected, mistakes

        cases.append(Case(name, shapes(X=X), run, derived=True))
    return run_cases(
        "SelfAttention",
        cls,
        cases,
        tr(
            "Replace raise NotImplementedError: build W_Q, W_K, W_V, attend over their projections."
        ),
    )


# --- 04: the causal mask and masked attention ----------------------------------------------


def check_causal_mask(fn) -> CheckResult:
    """fn(n) must give the additive (n, n) mask M: 0 for i >= j, -inf for i < j, float."""
    check_function("fn", fn)
    cases = []
    for n in (1, 4, 7):
        blocked = torch.ones(n, n, dtype=torch.bool).triu(1)
        expected = torch.zeros(n, n).masked_fill(blocked, NEG_INF)
        cases.append(
            Case(
                f"n = {n}",
                f"n = {n}",
                lambda f, n=n: f(n),
                expected,
                atol=0.0,
                mistakes=[
                    (
                        tr(
                            "the mask is reversed: -inf must be above the diagonal "
                            "(j > i, the future)"
                        ),
                        torch.zeros(n, n).masked_fill(blocked.mT, NEG_INF),
                    ),
                    (
                        tr("off by one: the diagonal (j = i) must stay 0, a token may see itself"),
                        torch.zeros(n, n).masked_fill(
                            torch.ones(n, n, dtype=torch.bool).triu(0), NEG_INF
                        ),
                    ),
                    (
                        tr("a boolean mask: the theory's M is additive, 0.0 and -inf as floats"),
                        blocked,
                    ),
                    (
                        tr("a boolean mask with True where allowed: M is additive, 0.0 and -inf"),
                        ~blocked,
                    ),
                    (
                        tr("a large negative number is not -inf: use float('-inf')"),
                        torch.zeros(n, n).masked_fill(blocked, -1e9),
                    ),
                ],
            )
        )
    return run_cases(
        "causal_mask",
        fn,
        cases,
        tr(
            "Replace raise NotImplementedError: "
            "return the (n, n) float mask, -inf above the diagonal."
        ),
    )


def check_masked_attention(fn) -> CheckResult:
    """fn(Q, K, V) must be causal attention (n = m): query i sees keys j <= i only."""
    check_function("fn", fn)
    g = seeded(5)
    cases = []
    for name, batch, n, d_k, d_v, dtype in (
        (tr("one sentence, n = 5"), (), 5, 4, 3, torch.float32),
        (tr("batched, n = 6, d_k = 8, d_v = 2"), (2,), 6, 8, 2, torch.float32),
        ("float64", (), 4, 4, 4, torch.float64),
    ):
        Q, K, V = (randn(g, *batch, n, d, dtype=dtype) for d in (d_k, d_k, d_v))
        blocked = torch.ones(n, n, dtype=torch.bool).triu(1)
        M = torch.zeros(n, n, dtype=dtype).masked_fill(blocked, NEG_INF)
        scores = Q @ K.mT / math.sqrt(d_k)
        cases.append(
            Case(
                name,
                shapes(Q=Q, K=K, V=V),
                lambda f, Q=Q, K=K, V=V: f(Q, K, V),
                F.scaled_dot_product_attention(Q, K, V, is_causal=True),
                atol=1e-5 if dtype == torch.float32 else 1e-10,
                mistakes=[
                    (
                        tr("no mask: every query sees the future; add M before softmax"),
                        F.softmax(scores, dim=-1) @ V,
                    ),
                    (
                        tr("the mask is reversed: each query sees only itself and the future"),
                        F.softmax(scores + M.mT, dim=-1) @ V,
                    ),
                    (
                        tr("off by one: the diagonal is masked too, so a token cannot see itself"),
                        diagonal_masked(scores, V),
                    ),
                    (
                        tr("the mask is applied after softmax: add it to the scores before"),
                        (F.softmax(scores, dim=-1) * (~blocked).to(dtype)) @ V,
                    ),
                    (
                        tr("the scores are not divided by √d_k"),
                        F.softmax(scores * math.sqrt(d_k) + M, dim=-1) @ V,
                    ),
                ],
            )
        )
    return run_cases(
        "masked_attention",
        fn,
        cases,
        tr(
            "Replace raise NotImplementedError: return causal attention softmax(Q Kᵀ / √d_k + M) V."
        ),
    )


def diagonal_masked(scores, V):
    """Causal attention that also hides each token from itself (row 0 sees nothing: 0)."""
    n = scores.shape[-1]
    hidden = torch.ones(n, n, dtype=torch.bool).triu(0)
    return F.softmax(scores.masked_fill(hidden, NEG_INF), dim=-1).nan_to_num(0.0) @ V


# --- 05: heads --------------------------------------------------------------------------------


def check_split_heads(fn) -> CheckResult:
    """fn(x, n_heads) must map (..., n, d_model) to (..., n_h, n, d_head)."""
    check_function("fn", fn)
    g = seeded(6)
    cases = []
    for name, shape, h in (
        (tr("one sentence, 2 heads"), (5, 8), 2),
        (tr("batched, 4 heads"), (2, 3, 12), 4),
        (tr("one head"), (4, 6), 1),
    ):
        x = randn(g, *shape)
        *batch, n, d = shape
        cases.append(
            Case(
                name,
                shapes(x=x) + f", n_heads = {h}",
                lambda f, x=x, h=h: f(x, h),
                x.unflatten(-1, (h, d // h)).transpose(-3, -2),
                atol=0.0,
                mistakes=[
                    (
                        tr(
                            "the features were cut into heads without the transpose: view as "
                            "(..., n, n_h, d_head), then transpose(-3, -2)"
                        ),
                        x.reshape(*batch, h, n, d // h),
                    ),
                    (
                        tr("shape (..., n, n_h, d_head): transpose it to (..., n_h, n, d_head)"),
                        x.unflatten(-1, (h, d // h)),
                    ),
                    (
                        tr(
                            "each head must get a contiguous slice of d_head features: "
                            "view the last axis as (h, d_head), not (d_head, h)"
                        ),
                        x.unflatten(-1, (d // h, h)).transpose(-1, -2).transpose(-3, -2),
                    ),
                ],
            )
        )
    return run_cases(
        "split_heads",
        fn,
        cases,
        tr("Replace raise NotImplementedError: return x as (..., n_h, n, d_head)."),
    )


def check_merge_heads(fn) -> CheckResult:
    """fn(x) must map (..., n_h, n, d_head) to (..., n, h · d_head): Concat(head_1..head_h)."""
    check_function("fn", fn)
    g = seeded(7)
    cases = []
    for name, shape in (
        (tr("2 heads"), (2, 5, 4)),
        (tr("batched, 4 heads"), (3, 4, 6, 2)),
        (tr("one head"), (1, 3, 5)),
    ):
        x = randn(g, *shape)
        *batch, h, n, d_head = shape
        cases.append(
            Case(
                name,
                shapes(x=x),
                lambda f, x=x: f(x),
                torch.cat(x.unbind(-3), dim=-1),  # Concat(head_1, ..., head_h), literally
                atol=0.0,
                mistakes=[
                    (
                        tr(
                            "the heads were reshaped without the transpose: transpose(-3, -2) to "
                            "(..., n, n_h, d_head) first, then reshape"
                        ),
                        x.reshape(*batch, n, h * d_head),
                    ),
                    (
                        tr("the result is (..., n, n_h, d_head): flatten the last two axes"),
                        x.transpose(-3, -2),
                    ),
                ],
            )
        )
    return run_cases(
        "merge_heads",
        fn,
        cases,
        tr(
            "Replace raise NotImplementedError: "
            "return the heads side by side, (..., n, h · d_head)."
        ),
    )


def check_multi_head_attention(cls) -> CheckResult:
    """cls(d_model, n_heads) has W_Q, W_K, W_V, W_O (each nn.Linear(d_model, d_model)) and
    forward(x) is unmasked multi-head self-attention. The reference is nn.MultiheadAttention
    with the answer's weights copied in."""
    check_class("cls", cls)
    g = seeded(8)
    cases = []
    for name, d_model, h, shape in (
        (tr("d_model = 8, 2 heads, one sentence"), 8, 2, (5, 8)),
        (tr("d_model = 12, 4 heads, batched"), 12, 4, (2, 3, 12)),
        (tr("d_model = 6, 1 head"), 6, 1, (4, 6)),
    ):
        x = randn(g, *shape)

        def run(answer, d_model=d_model, h=h, x=x):
            module = build(answer, d_model, h)
            W = linear_weights(module, "W_Q", "W_K", "W_V", "W_O")
            reference = nn.MultiheadAttention(d_model, h, bias=True, batch_first=True)
            with torch.no_grad():
                reference.in_proj_weight.copy_(
                    torch.cat([W[k].weight for k in "W_Q W_K W_V".split()])
                )
                reference.in_proj_bias.copy_(
                    torch.cat([bias_of(W[k]) for k in "W_Q W_K W_V".split()])
                )
                reference.out_proj.weight.copy_(W["W_O"].weight)
                reference.out_proj.bias.copy_(bias_of(W["W_O"]))
                got = module(x)
                batched = x if x.dim() == 3 else x.unsqueeze(0)
                expected = reference(batched, batched, batched, need_weights=False)[0]
                expected = expected if x.dim() == 3 else expected.squeeze(0)
                mistakes = multi_head_mistakes(x, W, h)
            return got, expected, mistakes

        cases.append(Case(name, shapes(x=x) + f", n_heads = {h}", run, derived=True))
    return run_cases(
        "MultiHeadAttention",
        cls,
        cases,
        tr("Replace raise NotImplementedError: build W_Q, W_K, W_V, W_O and attend with h heads."),
    )


def bias_of(layer: nn.Linear) -> torch.Tensor:
    return layer.bias if layer.bias is not None else torch.zeros(layer.out_features)


def multi_head_mistakes(x, W, h):
    d_model = x.shape[-1]
    d_head = d_model // h

    def heads(t):
        return t.unflatten(-1, (h, d_head)).transpose(-3, -2)

    def merge(t):
        return t.transpose(-3, -2).flatten(-2)

    Q, K, V = (heads(W[k](x)) for k in ("W_Q", "W_K", "W_V"))
    n = x.shape[-2]
    untransposed = [W[k](x).reshape(*x.shape[:-2], h, n, d_head) for k in ("W_Q", "W_K", "W_V")]
    scores = Q @ K.mT
    return [
        (
            tr(
                "the scores look divided by √d_model = √{d_model}, not √d_head = √{d_head}",
                d_model=d_model,
                d_head=d_head,
            ),
            W["W_O"](merge(F.softmax(scores / math.sqrt(d_model), dim=-1) @ V)),
        ),
        (
            tr("W_O is missing: MultiHead(X) = Concat(head_1..head_h) W_O"),
            merge(F.scaled_dot_product_attention(Q, K, V)),
        ),
        (
            tr("the heads were split without the transpose"),
            attempt(lambda: W["W_O"](merge(F.scaled_dot_product_attention(*untransposed)))),
        ),
        (
            tr("one head over all of d_model: split Q, K and V into heads first"),
            W["W_O"](F.scaled_dot_product_attention(W["W_Q"](x), W["W_K"](x), W["W_V"](x))),
        ),
    ]
