"""Checkers for notebook 04, masked self-attention: the mask of a left-padded batch, and a
test for causality."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from ..support.language import tr
from .core import *  # noqa: F403 (the checkers' toolkit: core.__all__)


def left_padded_allowed(lengths, n: int) -> torch.Tensor:
    """(B, n, n) bool, True where query i may see key j: j <= i and key j is a real token
    (left padding: sentence b's real tokens are its last lengths[b] positions)."""
    positions = torch.arange(n)
    real_key = positions[None, :] >= n - torch.tensor(lengths)[:, None]  # (B, n)
    causal = positions[None, :] <= positions[:, None]  # (n, n): key j <= query i
    return causal[None, :, :] & real_key[:, None, :]


def shifted_key(lengths, n: int, by: int) -> torch.Tensor:
    """(B, 1, n): the real keys of a left-padded batch with the padding's end moved `by`
    positions (the off-by-one of > for >=, or of n - length - 1)."""
    positions = torch.arange(n)
    return (positions[None, :] >= n - torch.tensor(lengths)[:, None] + by)[:, None, :]


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
        # a batch of one keeps its batch axis: (1, n, n), not (n, n)
        (tr("a batch of one sentence"), [2], 4),
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
                        tr(
                            "the padding ends one position off: sentence b's real tokens are "
                            "its last lengths[b] positions, from n - lengths[b] on "
                            "(positions >= n - length)"
                        ),
                        additive(causal[None] & shifted_key(lengths, n, +1)),
                    ),
                    (
                        tr(
                            "the padding ends one position off: sentence b's real tokens are "
                            "its last lengths[b] positions, from n - lengths[b] on "
                            "(positions >= n - length)"
                        ),
                        additive(causal[None] & shifted_key(lengths, n, -1)),
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
                    (
                        tr("the batch axis was squeezed away: a batch of one keeps it, (1, n, n)"),
                        additive(allowed)[0],
                    ),
                ],
            )
        )
    return run_cases(
        "left_padded_mask",
        fn,
        cases,
        tr("return the (B, n, n) additive mask."),
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


class NormLeak(Leak):
    """A leak through a LayerNorm: output row `to` also gets `size` times the normalised input
    row `source`. A constant added to every feature of that row leaves it unchanged."""

    def forward(self, x):
        out = self.layer(x).clone()
        source = F.layer_norm(x[..., self.source, :], x.shape[-1:])
        out[..., self.to, :] += self.size * source
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
        (
            tr("a leak through a LayerNorm from the last position into 0"),
            NormLeak(causal, n - 1, 0, 0.5),
            False,
        ),  # fmt: skip
    ]
    through_norm = tr(
        "your test calls a leak through a LayerNorm causal: a change that adds the same number "
        "to every feature vanishes in a LayerNorm; perturb with a random vector"
    )
    cases = []
    for name, layer, truth in layers:
        hint = missed_leak if not truth else flagged_causal
        if name == layers[-1][0]:
            hint = through_norm
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
        tr("return True if the layer is causal."),
    )
