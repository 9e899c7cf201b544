"""Notebook 07_gpt1_transformer_block: the usual mistakes in its exercises, each with the words
its report must show, and correct answers in other styles than the worked solution."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from nbhelpers import MultiHeadAttention
from nbhelpers.exercises import check_gpt1_block, check_gpt1_forward, check_parameter_count

from . import Exercise

NEG_INF = float("-inf")


def block_class(
    order="post",
    mask=True,
    first_residual=True,
    second_residual=True,
    norms="own",
    act=None,
    pre="right",
):
    """order: the post-LN wiring ("post", "pre" for pre-LN always, "swapped" sublayers);
    pre: the norm_first=True wiring ("right", "post" for post-LN always, "normalised_residual",
    "normalised_sum", "no_residual")."""

    class Answer(nn.Module):
        def __init__(self, d_model, n_heads, d_ff, norm_first=False):
            super().__init__()
            self.norm_first = norm_first
            self.attn = MultiHeadAttention(d_model, n_heads, causal=mask)
            self.ln_1, self.ln_2 = nn.LayerNorm(d_model), nn.LayerNorm(d_model)
            activation = act() if act is not None else nn.GELU(approximate="tanh")
            self.ffn = nn.Sequential(nn.Linear(d_model, d_ff), activation, nn.Linear(d_ff, d_model))

        def norm(self, which, x):
            if norms == "plain":  # a LayerNorm without its γ and β
                return F.layer_norm(x, x.shape[-1:])
            if norms == "swapped":
                which = 3 - which
            return (self.ln_1 if which == 1 else self.ln_2)(x)

        def forward(self, h):
            if order == "pre" or (self.norm_first and pre != "post"):
                return self.pre_ln(h)
            if order == "swapped":
                g = self.ln_1(h + self.ffn(h))
                return self.ln_2(g + self.attn(g))
            g = self.norm(1, (h if first_residual else 0) + self.attn(h))
            return self.norm(2, (g if second_residual else 0) + self.ffn(g))

        def pre_ln(self, h):
            x = self.norm(1, h)
            if pre == "normalised_residual":  # h overwritten by its normalised copy
                g = x + self.attn(x)
                y = self.norm(2, g)
                return y + self.ffn(y)
            if pre == "normalised_sum":  # both LayerNorms, before and after
                g = self.norm(1, h + self.attn(x))
                return self.norm(2, g + self.ffn(self.norm(2, g)))
            g = self.attn(x) if pre == "no_residual" else h + self.attn(x)
            return g + self.ffn(self.norm(2, g))

    return Answer


def gpt1_forward(positions=True, blocks="all", output="logits", last_only=False, window="slide"):
    """window: how a text longer than n_ctx is read: "slide" (right), "chunks", "short" (a
    window one token short), "first" or "last" (only n_ctx positions), "absolute" (W_p[:n]
    for the whole text) or "model" (right, but with the model's own forward pass)."""

    def logits_of(model, ids):
        n = ids.shape[-1]
        W_p = {True: model.W_p[:n], False: 0, "shifted": model.W_p[1 : n + 1]}[positions]
        h = model.W_e.weight[ids] + W_p
        chosen = {"all": list(model.blocks), "none": [], "last": [model.blocks[-1]]}[blocks]
        for block in chosen:
            h = block(h)
        return h @ model.W_e.weight.T

    def forward(model, ids):
        k, n = model.config.n_ctx, ids.shape[-1]
        width = k - 1 if window == "short" else k
        if n <= k:
            logits = logits_of(model, ids)
        elif window == "chunks":
            logits = torch.cat([logits_of(model, ids[..., i : i + k]) for i in range(0, n, k)], -2)
        elif window == "absolute":  # W_p[:n] for the whole text
            h = model.W_e.weight[ids] + model.W_p[:n]
            for block in model.blocks:
                h = block(h)
            logits = h @ model.W_e.weight.T
        elif window == "model":  # the model's own forward pass, window by window
            windows = ids.unfold(-1, k, 1)[..., 1:, :]
            logits = torch.cat([model(ids[..., :k]), model(windows)[..., -1, :]], -2)
        elif window in ("late", "early"):  # after the first n_ctx: one short, or one early
            first, last = (-k + 2, 0) if window == "late" else (-k, -1)
            later = [logits_of(model, ids[..., t + first : t + last + 1])[..., -1:, :]
                     for t in range(k, n)]  # fmt: skip
            logits = torch.cat([logits_of(model, ids[..., :k]), *later], -2)
        elif window in ("first", "last"):
            logits = logits_of(model, ids[..., :k] if window == "first" else ids[..., -k:])
        else:
            windows = ids.unfold(-1, width, 1)[..., 1:, :]  # the window ending at t >= width
            later = logits_of(model, windows)[..., -1, :]
            logits = torch.cat([logits_of(model, ids[..., :width]), later], -2)
        logits = logits[..., -1, :] if last_only else logits
        return {"logits": logits, "probs": logits.softmax(-1)}[output]

    return forward


def parameters(
    V, n_ctx, d, L, d_ff, tied=True, positions=True, biases=True, norms=True, ffn=None,
    attention_biases=True,
):  # fmt: skip
    d_ff = ffn if ffn is not None else d_ff
    attention = 4 * (d * d + (d if biases and attention_biases else 0))
    feed_forward = 2 * d * d_ff + ((d_ff + d) if biases else 0)
    block = attention + feed_forward + (4 * d if norms else 0)
    return V * d * (1 if tied else 2) + (n_ctx * d if positions else 0) + L * block


EXERCISES = [
    Exercise(
        check_gpt1_block,
        "MyGPT1Block",
        mistakes=[
            (block_class(mask=False), "no causal mask"),
            (block_class(order="pre"), "this is pre-LN"),
            (block_class(first_residual=False), "the first residual connection is missing"),
            (block_class(second_residual=False), "the second residual connection is missing"),
            (block_class(order="swapped"), "the feed-forward layer runs first"),
            (block_class(norms="swapped"), "ln_1 and ln_2 are swapped"),
            (block_class(norms="plain"), "the LayerNorms' own γ and β are not used"),
            (block_class(act=nn.ReLU), "the activation is ReLU"),
            (block_class(act=nn.Identity), "no activation"),
            (block_class(act=nn.GELU), "the exact GELU"),
            (block_class(pre="post"), "this is post-LN (GPT-1's order)"),
            (block_class(pre="normalised_residual"), "the residual adds the normalised input"),
            (block_class(pre="normalised_sum"), "the sum is normalised as well"),
            (block_class(pre="no_residual"), "h + attn(ln_1(h)), not attn(ln_1(h))"),
        ],
        other_styles=[],
    ),
    Exercise(
        check_gpt1_forward,
        "my_gpt1_forward",
        mistakes=[
            (gpt1_forward(positions=False), "W_p is missing"),
            (gpt1_forward(blocks="none"), "the blocks are skipped"),
            (gpt1_forward(blocks="last"), "only the last block"),
            (gpt1_forward(output="probs"), "probabilities, not logits"),
            (gpt1_forward(last_only=True), "only the last position"),
            (gpt1_forward(window="chunks"), "cut into separate chunks"),
            (gpt1_forward(window="short"), "each window is one token short"),
            (gpt1_forward(window="late"), "each window after the first is one token short"),
            (gpt1_forward(window="early"), "each window ends one token early"),
            (gpt1_forward(window="first"), "only the first n_ctx = 8 positions"),
            (gpt1_forward(window="last"), "only the last n_ctx = 8 positions"),
            (gpt1_forward(window="absolute"), "W_p has only n_ctx = 8 rows"),
            (gpt1_forward(window="model"), "it calls model(ids)"),
            (gpt1_forward(positions="shifted"), "not W_p[1 : n + 1]"),
        ],
        other_styles=[],
    ),
    Exercise(
        check_parameter_count,
        "my_parameter_count",
        mistakes=[
            (lambda *a: parameters(*a, tied=False), "W_e counted twice"),
            (lambda *a: parameters(*a, positions=False), "W_p is missing"),
            (lambda *a: parameters(*a, biases=False), "the biases are missing"),
            (lambda *a: parameters(*a, norms=False), "the LayerNorms are missing"),
            (
                lambda *a: parameters(*a, attention_biases=False),
                "the attention's biases are missing",
            ),
            (lambda V, n, d, L, f: parameters(V, n, d, L, f, ffn=4 * d), "d_ff is given"),
            (lambda *a: float(parameters(*a)), "a count is an int"),
            (lambda V, n, d, L, f: parameters(V, n, d, L, f) - L * 2 * d, "one LayerNorm per"),
            (lambda V, n, d, L, f: parameters(V, n, d, L, f) - L * d, "one bias of d_model"),
        ],
        other_styles=[],
    ),
]
