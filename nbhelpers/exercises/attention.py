"""Checkers for the attention exercises of notebooks 01-05, each against torch's own functions."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

from ..support.language import tr
from .core import (
    Case,
    CheckResult,
    check_class,
    check_function,
    leaves_state_alone,
    randn,
    run_cases,
    seeded,
    shapes,
)

NEG_INF = float("-inf")


def attempt(fn, *args):
    """fn(*args), or None when a mistaken variant cannot run on these inputs."""
    try:
        return fn(*args)
    except Exception:
        return None


# --- 01: similarity scores -------------------------------------------------------------------


@leaves_state_alone
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


# --- 01: the divisor for any variance --------------------------------------------------------


@leaves_state_alone
def check_score_divisor(fn) -> CheckResult:
    """fn(d_k, sigma_q, sigma_k) must give the number to divide q·k by so that the scores
    have variance 1 when the entries of q and of k are independent with mean 0 and standard
    deviations sigma_q and sigma_k: Var(q·k) = d_k σ_q² σ_k², so the divisor is √d_k σ_q σ_k.
    (The tests confirm the formula on a million sampled pairs.)"""
    check_function("fn", fn)
    cases = []
    for name, d_k, s_q, s_k in (
        (tr("σ_q = 0.5, σ_k = 3, d_k = 8"), 8, 0.5, 3.0),
        (tr("unit variance, d_k = 64"), 64, 1.0, 1.0),
        (tr("σ = 2 for both, d_k = 16"), 16, 2.0, 2.0),
        (tr("one feature, σ_q = 1, σ_k = 4"), 1, 1.0, 4.0),
    ):

        def value(x):
            return torch.tensor(float(x), dtype=torch.float64)

        root = math.sqrt(d_k)
        cases.append(
            Case(
                name,
                f"d_k = {d_k}, sigma_q = {s_q:g}, sigma_k = {s_k:g}",
                lambda f, d_k=d_k, s_q=s_q, s_k=s_k: value(f(d_k, s_q, s_k)),
                value(math.sqrt(d_k * s_q**2 * s_k**2)),
                atol=1e-9 * root * s_q * s_k,
                mistakes=[
                    (
                        tr(
                            "only √d_k: that assumes variance 1; with σ_q and σ_k the "
                            "variance of q·k is d_k σ_q² σ_k²"
                        ),
                        value(root),
                    ),
                    (
                        tr("a variance, not a standard deviation: take the square root"),
                        value(d_k * s_q**2 * s_k**2),
                    ),
                    (
                        tr("σ² where σ belongs: divide by the standard deviation √d_k σ_q σ_k"),
                        value(root * s_q**2 * s_k**2),
                    ),
                    (
                        tr("d_k where √d_k belongs"),
                        value(d_k * s_q * s_k),
                    ),
                    (
                        tr("one σ is missing: both the queries and the keys scale q·k"),
                        value(root * s_q) if s_q != s_k else None,
                    ),
                    (
                        tr("one σ is missing: both the queries and the keys scale q·k"),
                        value(root * s_k) if s_q != s_k else None,
                    ),
                    (
                        tr("σ_q + σ_k: the variances multiply, they do not add"),
                        value(root * (s_q + s_k)),
                    ),
                ],
            )
        )
    return run_cases(
        "score_divisor",
        fn,
        cases,
        tr("Replace raise NotImplementedError: return the standard deviation of q·k."),
    )


# --- 02: log-softmax and the backward pass of softmax -----------------------------------------


@leaves_state_alone
def check_log_softmax(fn) -> CheckResult:
    """fn(scores) must give log softmax over the last axis, s - logsumexp(s): finite where the
    weight underflows to 0 (a gap of 1000), stable at ±1000, and -inf only where s is -inf."""
    check_function("fn", fn)
    g = seeded(21)
    inputs = [
        (tr("a 4 x 6 matrix"), randn(g, 4, 6)),
        (tr("batched (2, 3, 5)"), randn(g, 2, 3, 5)),
        ("float64", randn(g, 3, 4, dtype=torch.float64)),
        (tr("large scores ±1000"), torch.tensor([[1000.0, 999.0, 998.0], [-1000.0, -999.0, 0.0]])),
        (tr("a masked key (-inf)"), torch.tensor([[0.5, NEG_INF, 2.0], [1.0, 0.0, NEG_INF]])),
    ]
    cases = []
    for name, s in inputs:
        cases.append(
            Case(
                name,
                shapes(scores=s),
                lambda f, s=s: f(s.clone()),
                F.log_softmax(s, dim=-1),
                atol=1e-5 if s.dtype == torch.float32 else 1e-12,
                mistakes=[
                    (
                        tr(
                            "log of softmax underflows: a weight of e^-1000 is 0 in floating "
                            "point and its log -inf; compute s - logsumexp(s) instead"
                        ),
                        torch.log(F.softmax(s, dim=-1)),
                    ),
                    (
                        tr(
                            "exp overflows without the maximum: subtract max(s) before exp, "
                            "logsumexp(s) = m + log Σ exp(s - m)"
                        ),
                        s - torch.log(torch.exp(s).sum(-1, keepdim=True)),
                    ),
                    (
                        tr("over the wrong axis: normalise over dim=-1"),
                        attempt(F.log_softmax, s, 0),
                    ),
                    (
                        tr("the softmax itself, not its log"),
                        F.softmax(s, dim=-1),
                    ),
                ],
            )
        )
    return run_cases(
        "log_softmax",
        fn,
        cases,
        tr("Replace raise NotImplementedError: return s - logsumexp(s) over the last axis."),
    )


@leaves_state_alone
def check_softmax_backward(fn) -> CheckResult:
    """fn(a, g) for weights a = softmax(s) and an upstream gradient g = ∂ℓ/∂a, both (..., m),
    must give ∂ℓ/∂s = J g without building the (m, m) Jacobian J: a ⊙ (g - a·g). The reference
    is torch.autograd.grad through F.softmax."""
    check_function("fn", fn)
    gen = seeded(22)
    cases = []
    for name, shape, dtype in (
        (tr("one row of 5 weights"), (5,), torch.float32),
        (tr("a 4 x 6 matrix of rows"), (4, 6), torch.float32),
        (tr("batched (2, 3, 5)"), (2, 3, 5), torch.float32),
        ("float64", (3, 4), torch.float64),
    ):
        s = randn(gen, *shape, dtype=dtype, scale=2.0).requires_grad_()
        a = F.softmax(s, dim=-1)
        g = randn(gen, *shape, dtype=dtype)
        (expected,) = torch.autograd.grad(a, s, g)
        a, g = a.detach(), g
        dot = (a * g).sum(-1, keepdim=True)
        cases.append(
            Case(
                name,
                shapes(a=a, g=g),
                lambda f, a=a, g=g: f(a.clone(), g.clone()),
                expected,
                atol=1e-6 if dtype == torch.float32 else 1e-12,
                mistakes=[
                    (
                        tr(
                            "a ⊙ g alone: the - a aᵀ part of the Jacobian is missing, a ⊙ (g - a·g)"
                        ),
                        a * g,
                    ),
                    (
                        tr("g - a·g without the factor a: ∂ℓ/∂s_l = a_l (g_l - a·g)"),
                        g - dot,
                    ),
                    (
                        tr("the sum a·g runs over the wrong axis: sum over dim=-1, one per row"),
                        attempt(lambda a=a, g=g: a * (g - (a * g).sum(0, keepdim=True))),
                    ),
                    (
                        tr("the sign is reversed: a ⊙ (g - a·g), not a ⊙ (a·g - g)"),
                        -(a * (g - dot)),
                    ),
                ],
            )
        )
    return run_cases(
        "softmax_backward",
        fn,
        cases,
        tr("Replace raise NotImplementedError: return ∂ℓ/∂s = a ⊙ (g - a·g), row by row."),
    )


# --- 03: how spread out the weights are -------------------------------------------------------


@leaves_state_alone
def check_attention_entropy(fn) -> CheckResult:
    """fn(weights) for rows that sum to 1 (or are all 0) must give each row's entropy in nats,
    H = -Σ_j a_j log a_j with 0 log 0 = 0: (..., n, m) -> (..., n). The reference is
    torch.special.entr."""
    check_function("fn", fn)
    g = seeded(23)
    masked = F.softmax(
        randn(g, 5, 5).masked_fill(torch.ones(5, 5, dtype=torch.bool).triu(1), NEG_INF), -1
    )
    inputs = [
        (tr("random weights, 4 x 6"), F.softmax(randn(g, 4, 6), -1)),
        (tr("causal weights (exact zeros)"), masked),
        (tr("one-hot and uniform rows"), torch.tensor([[1.0, 0.0, 0.0, 0.0], [0.25] * 4])),
        (tr("a row with nothing to see (all 0)"), torch.tensor([[0.5, 0.5, 0.0], [0.0, 0.0, 0.0]])),
        (tr("batched float64"), F.softmax(randn(g, 2, 3, 4, dtype=torch.float64), -1)),
    ]
    cases = []
    for name, a in inputs:
        expected = torch.special.entr(a).sum(-1)
        plogp = a * torch.log(a)
        cases.append(
            Case(
                name,
                shapes(weights=a),
                lambda f, a=a: f(a.clone()),
                expected,
                atol=1e-5 if a.dtype == torch.float32 else 1e-12,
                mistakes=[
                    (
                        tr(
                            "0 log 0 gave NaN: a zero weight contributes 0 (the limit of "
                            "p log p), so skip or zero those terms"
                        ),
                        -plogp.sum(-1),
                    ),
                    (tr("the sign: H = -Σ a log a is positive"), plogp.nan_to_num(0.0).sum(-1)),
                    (
                        tr("log base 2 (bits): the course measures entropy in nats, log = ln"),
                        -(plogp.nan_to_num(0.0) / math.log(2)).sum(-1),
                    ),
                    (
                        tr("summed over the wrong axis: one entropy per query row, dim=-1"),
                        attempt(lambda plogp=plogp: -plogp.nan_to_num(0.0).sum(-2)),
                    ),
                ],
            )
        )
    return run_cases(
        "attention_entropy",
        fn,
        cases,
        tr("Replace raise NotImplementedError: return -Σ a log a for each row, with 0 log 0 = 0."),
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


@leaves_state_alone
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


@leaves_state_alone
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


# --- 04: the mask of a left-padded batch, and a test for causality ---------------------------


def left_padded_allowed(lengths, n: int) -> torch.Tensor:
    """(B, n, n) bool, True where query i may see key j: j <= i and key j is a real token
    (left padding: sentence b's real tokens are its last lengths[b] positions)."""
    positions = torch.arange(n)
    real_key = positions[None, :] >= n - torch.tensor(lengths)[:, None]  # (B, n)
    causal = positions[None, :] <= positions[:, None]  # (n, n): key j <= query i
    return causal[None, :, :] & real_key[:, None, :]


def additive(allowed: torch.Tensor, blocked_value: float = NEG_INF) -> torch.Tensor:
    return torch.zeros(allowed.shape).masked_fill(~allowed, blocked_value)


@leaves_state_alone
def check_left_padded_mask(fn) -> CheckResult:
    """fn(lengths, n) must give the additive (B, n, n) mask of a left-padded batch under the
    causal mask: -inf where key j is in the future (j > i) or is padding (the first
    n - lengths[b] positions of sentence b); a query with no real key keeps an all -inf row.
    The reference builds the rule as booleans, the form F.scaled_dot_product_attention takes."""
    check_function("fn", fn)
    cases = []
    for name, lengths, n in (
        (tr("[PAD] [PAD] 犬 が 歩く beside a full sentence"), [5, 3], 5),
        (tr("three sentences, n = 4"), [2, 4, 1], 4),
        (tr("an empty sentence"), [3, 0], 3),
    ):
        allowed = left_padded_allowed(lengths, n)
        positions = torch.arange(n)
        causal = positions[None, :] <= positions[:, None]
        right_key = positions[None, :] < torch.tensor(lengths)[:, None]
        real_query = positions[None, :] >= n - torch.tensor(lengths)[:, None]
        empty = ~allowed.any(-1, keepdim=True)  # (B, n, 1): queries with nothing to see
        cases.append(
            Case(
                name,
                f"lengths = {lengths}, n = {n}",
                lambda f, lengths=lengths, n=n: f(list(lengths), n),
                additive(allowed),
                atol=0.0,
                mistakes=[
                    (
                        tr(
                            "this is right padding: here the padding comes first, at "
                            "positions 0 .. n - length - 1"
                        ),
                        additive(causal[None] & right_key[:, None, :]),
                    ),
                    (
                        tr(
                            "the padding is masked on the queries (rows): mask the padding "
                            "keys (columns), so no query can see them"
                        ),
                        additive(causal[None] & real_query[:, :, None]),
                    ),
                    (
                        tr("the causal part is missing: a query may not see later keys"),
                        additive(real_key_all(lengths, n)),
                    ),
                    (
                        tr("the padding part is missing: real tokens can see the [PAD] keys"),
                        additive(causal[None].expand(len(lengths), n, n)),
                    ),
                    (
                        tr(
                            "an empty row must stay all -inf: a [PAD] query has no real key, "
                            "and letting it see itself invents one (softmax turns the row "
                            "into zero weights)"
                        ),
                        additive(allowed | (empty & torch.eye(n, dtype=torch.bool))),
                    ),
                    (
                        tr("a large negative number is not -inf: use float('-inf')"),
                        additive(allowed, -1e9),
                    ),
                    (
                        tr("a boolean mask: the exercise asks for the additive 0 / -inf form"),
                        allowed,
                    ),
                    (
                        tr("a boolean mask: the exercise asks for the additive 0 / -inf form"),
                        ~allowed,
                    ),
                ],
            )
        )
    return run_cases(
        "left_padded_mask",
        fn,
        cases,
        tr("Replace raise NotImplementedError: return the (B, n, n) additive mask."),
    )


def real_key_all(lengths, n: int) -> torch.Tensor:
    positions = torch.arange(n)
    real_key = positions[None, :] >= n - torch.tensor(lengths)[:, None]
    return real_key[:, None, :].expand(len(lengths), n, n)


class Leak(nn.Module):
    """A causal layer plus a small leak: output row `to` also gets `size` times input row
    `source` (a later position when source > to)."""

    def __init__(self, layer: nn.Module, source: int, to: int, size: float):
        super().__init__()
        self.layer, self.source, self.to, self.size = layer, source, to, size

    def forward(self, x):
        out = self.layer(x).clone()
        out[..., self.to, :] += self.size * x[..., self.source, :]
        return out


class WithPast(nn.Module):
    """A causal layer that also adds each position's previous input: causal, not a leak."""

    def __init__(self, layer: nn.Module):
        super().__init__()
        self.layer = layer

    def forward(self, x):
        previous = torch.cat([torch.zeros_like(x[..., :1, :]), x[..., :-1, :]], dim=-2)
        return self.layer(x) + previous


@leaves_state_alone
def check_causality_test(fn) -> CheckResult:
    """fn(layer, n, d_model) must say whether a layer is causal: True when every output
    position i depends only on the inputs at positions <= i, for layers that map (n, d_model)
    to (n, d_model). The checker knows the truth of each layer it passes in, because it built
    them: causal multi-head attention, the same without the mask, a position-wise layer, a
    causal layer that also reads the past, and causal layers with one hidden leak."""
    from ..multihead import MultiHeadAttention

    check_function("fn", fn)
    d_model, n = 8, 5
    torch.manual_seed(16)  # inside the checker's own random state
    causal = MultiHeadAttention(d_model, 2, causal=True).eval()
    unmasked = MultiHeadAttention(d_model, 2, causal=False).eval()
    missed_leak = tr(
        "your test calls a leaking layer causal: perturb each position k in turn and "
        "compare every output before k, with a tight tolerance"
    )
    flagged_causal = tr(
        "your test calls a causal layer non-causal: only the outputs before the perturbed "
        "position must stay the same; those at and after it may change"
    )
    layers = [
        (tr("causal attention"), causal, True),
        (tr("attention without the mask"), unmasked, False),
        (tr("position-wise: one nn.Linear"), nn.Linear(d_model, d_model), True),
        (tr("causal, and reads the previous position"), WithPast(causal), True),
        (tr("a leak from the last position into position 0"), Leak(causal, n - 1, 0, 0.5), False),
        (tr("a weak leak (1e-4) from position 3 into 2"), Leak(causal, 3, 2, 1e-4), False),
    ]
    cases = []
    for name, layer, truth in layers:
        hint = missed_leak if not truth else flagged_causal
        if name == layers[1][0]:
            hint = tr(
                "your test calls attention without a mask causal: change a later input and "
                "look at the earlier outputs"
            )
        cases.append(
            Case(
                name,
                f"layer (n = {n}, d_model = {d_model})",
                lambda f, layer=layer: torch.tensor(bool(f(layer, n, d_model))),
                torch.tensor(truth),
                atol=0.0,
                mistakes=[(hint, torch.tensor(not truth))],
            )
        )
    return run_cases(
        "causality_test",
        fn,
        cases,
        tr("Replace raise NotImplementedError: return True if the layer is causal."),
    )


# --- 05: heads --------------------------------------------------------------------------------


@leaves_state_alone
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


# --- 05: causal multi-head attention with one fused projection -------------------------------


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
                    f"W_QKV must be nn.Linear(d_model, 3 * d_model) = nn.Linear({d_model}, "
                    f"{3 * d_model}), got out_features={W['W_QKV'].out_features}"
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
        tr(
            "Replace raise NotImplementedError: build W_QKV and W_O; return the output and "
            "the weights of each head."
        ),
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
    return [
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
