"""Notebook 04_masked_self_attention: the usual mistakes in its exercises, each with the words
its report must show, and correct answers in other styles than the worked solution."""

from __future__ import annotations

import torch

from nbhelpers.exercises import check_causality_test, check_left_padded_mask

from . import Exercise

NEG_INF = float("-inf")


def left_padded(
    lengths,
    n,
    *,
    side="left",
    on="keys",
    causal=True,
    padding=True,
    fill=NEG_INF,
    patch_empty=False,
    off_by=0,
):
    positions = torch.arange(n)
    L = torch.tensor(lengths)[:, None]
    real = positions[None, :] >= n - L + off_by if side == "left" else positions[None, :] < L
    allowed = torch.ones(len(lengths), n, n, dtype=torch.bool)
    if causal:
        allowed &= positions[None, :] <= positions[:, None]
    if padding:
        allowed &= real[:, None, :] if on == "keys" else real[:, :, None]
    if patch_empty:
        allowed |= ~allowed.any(-1, keepdim=True) & torch.eye(n, dtype=torch.bool)
    return torch.zeros(allowed.shape).masked_fill(~allowed, fill)


def causality_test(positions="all", atol=1e-6, compare="before", shift="random"):
    def is_causal(layer, n, d_model):
        x = torch.randn(n, d_model)
        with torch.no_grad():
            before = layer(x)
            for k in range(1, n) if positions == "all" else [1]:
                changed = x.clone()
                changed[k] += 1.0 if shift == "constant" else torch.randn(d_model)
                after = layer(changed)
                rows = slice(0, k) if compare == "before" else slice(0, n)
                if not torch.allclose(after[rows], before[rows], rtol=0, atol=atol):
                    return False
        return True

    return is_causal


EXERCISES = [
    Exercise(
        check_left_padded_mask,
        "my_left_padded_mask",
        mistakes=[
            (lambda lengths, n: left_padded(lengths, n, side="right"), "this is right padding"),
            (lambda lengths, n: left_padded(lengths, n).squeeze(), "the batch axis was squeezed"),
            (
                lambda lengths, n: left_padded(lengths, n, off_by=1),
                "the padding ends one position off",
            ),
            (lambda lengths, n: left_padded(lengths, n, on="queries"), "masked on the queries"),
            (
                lambda lengths, n: left_padded(lengths, n, causal=False),
                "the causal part is missing",
            ),
            (
                lambda lengths, n: left_padded(lengths, n, padding=False),
                "the padding part is missing",
            ),
            (lambda lengths, n: left_padded(lengths, n, patch_empty=True), "must stay all -inf"),
            (lambda lengths, n: left_padded(lengths, n, fill=-1e9), "is not -inf"),
            (lambda lengths, n: torch.isfinite(left_padded(lengths, n)), "a boolean mask"),
        ],
        other_styles=[lambda lengths, n: torch.where(left_padded(lengths, n) == 0, 0.0, NEG_INF)],
    ),
    Exercise(
        check_causality_test,
        "my_causality_test",
        mistakes=[
            (lambda layer, n, d: True, "calls attention without a mask causal"),
            (lambda layer, n, d: False, "calls a causal layer non-causal"),
            (causality_test(positions="one"), "calls a leaking layer causal"),
            (causality_test(atol=1e-2), "calls a leaking layer causal"),
            (causality_test(compare="all"), "calls a causal layer non-causal"),
            (causality_test(shift="constant"), "perturb with a random vector"),
        ],
        other_styles=[],
    ),
]
