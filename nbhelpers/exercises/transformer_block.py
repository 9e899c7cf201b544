"""Checkers for notebook 07, the GPT-1 block: the block, the whole forward pass, the parameter
count."""

from __future__ import annotations

import numbers

import torch
import torch.nn.functional as F
from torch import nn

from ..gpt1 import GPT1
from ..support.language import tr
from .core import *  # noqa: F403 (the checkers' toolkit: core.__all__)
from .gpt_cases import (
    SENTENCE,
    VOCAB,
    small_model,
)
from .references import block_parts, gpt1_gelu, reference_layer


@leaves_state_alone
def check_gpt1_block(cls) -> CheckResult:
    """cls(d_model, n_heads, d_ff, norm_first=False) has attn (with W_Q, W_K, W_V, W_O), ln_1,
    ffn (nn.Sequential(nn.Linear, nn.GELU, nn.Linear)) and ln_2; forward(h) is the causal
    post-LN block of GPT-1, or with norm_first=True the pre-LN block of GPT-2. The reference
    is nn.TransformerEncoderLayer(norm_first=norm_first) with a causal mask, the answer's
    weights (its LayerNorms' γ and β and zero biases made random first) and GPT-1's tanh
    GELU, whatever the answer's ffn holds."""
    check_class("cls", cls)
    g = seeded(13)
    cases = []
    for name, d_model, h, d_ff, shape, norm_first in (
        (tr("post-LN, d = 8, 2 heads, d_ff = 32, one sentence"), 8, 2, 32, (5, 8), False),
        (tr("post-LN, d = 12, 4 heads, d_ff = 20, batched"), 12, 4, 20, (2, 4, 12), False),
        (tr("pre-LN, d = 8, 2 heads, d_ff = 32, one sentence"), 8, 2, 32, (5, 8), True),
        (tr("pre-LN, d = 12, 4 heads, d_ff = 20, batched"), 12, 4, 20, (2, 4, 12), True),
    ):
        x = randn(g, *shape)

        def run(answer, d_model=d_model, h=h, d_ff=d_ff, x=x, norm_first=norm_first):
            if norm_first:  # γ, β and zero biases made random
                block = build(answer, d_model, h, d_ff, norm_first=True)
            else:  # the capstone builds the block with three arguments
                block = build(answer, d_model, h, d_ff)
            return block_comparison(block, x, h, norm_first)

        cases.append(Case(name, shapes(h=x), run, derived=True))
    return run_cases(
        "GPT1Block",
        cls,
        cases,
        tr(
            "build attn, ln_1, ffn, ln_2, the post-LN forward, and the pre-LN one when "
            "norm_first is true."
        ),
    )


def block_comparison(block, x, h, norm_first):
    W, (ln_1, ln_2), ffn = block_parts(block)
    reference = reference_layer(block, h, norm_first=norm_first)
    n = x.shape[-2]
    causal = torch.zeros(n, n).masked_fill(torch.ones(n, n, dtype=torch.bool).triu(1), NEG_INF)
    with torch.no_grad():
        block.eval()
        got = block(x)
        batched = x if x.dim() == 3 else x.unsqueeze(0)
        squeeze = (lambda t: t) if x.dim() == 3 else (lambda t: t.squeeze(0))

        def variant(**mistake):
            layer = reference_layer(block, h, norm_first=norm_first, **mistake)
            return squeeze(layer(batched, src_mask=causal, is_causal=True))

        def attn(t):  # MaskedMultiHead(t), computed by torch
            return reference.self_attn(t, t, t, attn_mask=causal)[0]

        def gelu_ffn(t):
            return reference.linear2(gpt1_gelu(reference.linear1(t)))

        def plain_norm(t):  # a LayerNorm that ignores its own γ and β
            return F.layer_norm(t, (t.shape[-1],), eps=ln_1.eps)

        expected = squeeze(reference(batched, src_mask=causal, is_causal=True))
        wiring = pre_ln_mistakes if norm_first else post_ln_mistakes
        mistakes = [
            (
                tr("no causal mask: each position sees the future; the block must be masked"),
                squeeze(reference(batched)),
            ),
            *wiring(batched, block, h, attn, ln_1, ln_2, ffn, causal, squeeze),
            (
                tr(
                    "ln_1 and ln_2 are swapped: ln_1 belongs to the attention sublayer, ln_2 "
                    "to the feed-forward one"
                ),
                lambda: variant(swap_norms=True),
            ),
            (
                tr(
                    "the LayerNorms' own γ and β are not used: call ln_1 and ln_2 (the modules), "
                    "not a LayerNorm without weights"
                ),
                squeeze(
                    wired(batched, attn, plain_norm, plain_norm, gelu_ffn, norm_first=norm_first)
                ),
            ),
            (
                tr(
                    "the activation is ReLU: GPT-1's feed-forward layer uses GELU "
                    '(nn.GELU(approximate="tanh"))'
                ),
                lambda: variant(activation=F.relu),
            ),
            (
                tr(
                    "no activation: the feed-forward layer needs a GELU between its Linears "
                    '(nn.GELU(approximate="tanh"))'
                ),
                lambda: variant(activation=lambda t: t),
            ),
            (
                tr(
                    'the exact GELU: GPT-1 uses its tanh approximation, nn.GELU(approximate="tanh")'
                ),
                lambda: variant(activation=F.gelu),
            ),
        ]
    return got, expected, mistakes


def wired(h, attn, ln_1, ln_2, ffn, *, norm_first):
    """The block's two wirings, from its sublayers: post-LN, LN(h + sublayer(h)), as in GPT-1;
    pre-LN, h + sublayer(LN(h)), as in GPT-2."""
    if norm_first:
        g = h + attn(ln_1(h))
        return g + ffn(ln_2(g))
    g = ln_1(h + attn(h))
    return ln_2(g + ffn(g))


def post_ln_mistakes(h, block, n_heads, attn, ln_1, ln_2, ffn, causal, squeeze):
    g = ln_1(h + attn(h))
    no_residual = ln_1(attn(h))
    first = ln_1(h + ffn(h))
    pre_ln = reference_layer(block, n_heads, norm_first=True)
    return [
        (
            tr(
                "this is pre-LN (GPT-2's order): GPT-1 normalises after each residual sum, "
                "h = ln_1(h + attn(h))"
            ),
            squeeze(pre_ln(h, src_mask=causal, is_causal=True)),
        ),
        (
            tr("the first residual connection is missing: ln_1(h + attn(h)), not ln_1(attn(h))"),
            squeeze(ln_2(no_residual + ffn(no_residual))),
        ),
        (
            tr("the second residual connection is missing: ln_2(g + ffn(g)), not ln_2(ffn(g))"),
            squeeze(ln_2(ffn(g))),
        ),
        (
            tr("the feed-forward layer runs first: attention, then the feed-forward layer"),
            squeeze(ln_2(first + attn(first))),
        ),
    ]


def pre_ln_mistakes(h, block, n_heads, attn, ln_1, ln_2, ffn, causal, squeeze):
    post_ln = reference_layer(block, n_heads, norm_first=False)
    x = ln_1(h)
    attended = attn(x)
    g = x + attended  # the residual taken from the normalised copy
    normalised = ln_1(h + attended)  # the sum normalised as well
    return [
        (
            tr(
                "this is post-LN (GPT-1's order): with norm_first=True each sublayer reads a "
                "normalised copy and adds to h itself, h + attn(ln_1(h))"
            ),
            squeeze(post_ln(h, src_mask=causal, is_causal=True)),
        ),
        (
            tr(
                "the residual adds the normalised input: pre-LN adds each sublayer's output to "
                "h itself, h + attn(ln_1(h)), not ln_1(h) + attn(ln_1(h))"
            ),
            squeeze(ln_2(g) + ffn(ln_2(g))),
        ),
        (
            tr(
                "the sum is normalised as well: pre-LN leaves h + attn(ln_1(h)) as it is (the "
                "LayerNorm comes before each sublayer, not after)"
            ),
            squeeze(ln_2(normalised + ffn(ln_2(normalised)))),
        ),
        (
            tr("the first residual connection is missing: h + attn(ln_1(h)), not attn(ln_1(h))"),
            squeeze(attended + ffn(ln_2(attended))),
        ),
    ]


@leaves_state_alone
def check_gpt1_forward(fn) -> CheckResult:
    """fn(model, ids) must give the logits h_L W_eᵀ (..., n, n_vocab) of an nbhelpers GPT1, built
    from its parts: h_0 = W_e[ids] + W_p[:n], each block in turn, then the tied output; for
    n > n_ctx, position i from the n_ctx tokens that end at it, numbered 0 .. n_ctx - 1. The
    reference computes the same from torch's own pieces, window by window: F.embedding, each
    block's weights in an nn.TransformerEncoderLayer with a causal mask, and F.linear with
    W_e."""
    check_function("fn", fn)
    model = small_model(17)
    k = model.config.n_ctx
    g = seeded(17)
    cases = []
    for name, ids in (
        ("<SOS> 犬 が 河岸 を 歩く", SENTENCE),
        (tr("a batch of 3 sentences"), torch.randint(0, len(VOCAB), (3, 7), generator=g)),
        (
            tr("13 tokens, longer than the context of {n_ctx}", n_ctx=k),
            torch.randint(0, len(VOCAB), (13,), generator=g),
        ),
        (
            tr("a batch of 2 texts of 11 tokens, n_ctx = {n_ctx}", n_ctx=k),
            torch.randint(0, len(VOCAB), (2, 11), generator=g),
        ),
        (tr("a batch of one sentence"), torch.randint(0, len(VOCAB), (1, 5), generator=g)),
    ):
        long = ids.shape[-1] > k
        with torch.no_grad():
            if long:
                expected, mistakes = windowed_logits(model, ids), window_mistakes(model, ids)
            else:
                expected, mistakes = reference_logits(model, ids, with_mistakes=True)
        cases.append(
            Case(
                name,
                shapes(ids=ids),
                lambda f, ids=ids: calling_none_of(MODEL_SHORTCUTS, shortcut_hint, f, model, ids),
                expected,
                atol=1e-4,
                mistakes=mistakes,
                if_raised=tr(
                    "W_p has only n_ctx = {n_ctx} rows: number each window's tokens 0 .. "
                    "n_ctx - 1, not by their place in the whole text",
                    n_ctx=k,
                )
                if long
                else None,
            )
        )
    return run_cases(
        "gpt1_forward",
        fn,
        cases,
        tr("return the next-token logits at every position."),
    )


# What the exercise asks the learner to assemble: the model's own forward pass, whole or in
# parts. Notebook 08's capstone hands the forward a model that has only W_e, W_p and blocks.
MODEL_SHORTCUTS = [
    (GPT1, "forward", "model(ids)"),
    (GPT1, "embed", "model.embed"),
    (GPT1, "hidden_states", "model.hidden_states"),
    (GPT1, "logits", "model.logits"),
]


def shortcut_hint(called: str) -> str:
    return tr(
        "it calls {name}: build the logits from model.W_e, model.W_p and model.blocks "
        "(notebook 08's capstone gives your forward a model that has only those)",
        name=called,
    )


def reference_logits(model, ids, with_mistakes=False):
    """torch's own logits for ids (..., n), n <= n_ctx: F.embedding, the blocks as
    nn.TransformerEncoderLayer, F.linear with W_e; and, if asked, the usual mistakes."""
    n = ids.shape[-1]
    causal = torch.zeros(n, n).masked_fill(torch.ones(n, n, dtype=torch.bool).triu(1), NEG_INF)
    h0 = F.embedding(ids, model.W_e.weight) + model.W_p[:n]
    batched = h0.reshape(-1, n, h0.shape[-1])  # (..., n, d) -> (B, n, d): torch's layer is 3-D
    # the reference, and two usual mistakes: no W_p, and W_p taken one row late
    tracks = [batched]
    if with_mistakes:
        shifted = batched - model.W_p[:n] + model.W_p[1 : n + 1] if n < len(model.W_p) else None
        tracks += [batched - model.W_p[:n], shifted]
    layers = [reference_layer(block, model.config.n_heads) for block in model.blocks]
    for layer in layers:
        tracks = [None if t is None else layer(t, src_mask=causal, is_causal=True) for t in tracks]
    h = tracks[0].reshape(h0.shape)
    expected = F.linear(h, model.W_e.weight)
    if not with_mistakes:
        return expected
    no_positions, shifted = (None if t is None else t.reshape(h0.shape) for t in tracks[1:])
    last_block = layers[-1](batched, src_mask=causal, is_causal=True).reshape(h0.shape)
    return expected, [
        (
            tr("W_p is missing: h_0 = W_e[ids] + W_p[:n], the position of each token"),
            F.linear(no_positions, model.W_e.weight),
        ),
        (
            tr(
                "the positions are shifted by one: the first token is at position 0, "
                "so add W_p[:n], not W_p[1 : n + 1]"
            ),
            None if shifted is None else F.linear(shifted, model.W_e.weight),
        ),
        (
            tr("probabilities, not logits: return h_L W_eᵀ before softmax"),
            F.softmax(expected, dim=-1),
        ),
        (
            tr("log-probabilities, not logits: return h_L W_eᵀ before softmax"),
            F.log_softmax(expected, dim=-1),
        ),
        (
            tr("the blocks are skipped: h_l = block(h_{l-1}) for every block in turn"),
            F.linear(h0, model.W_e.weight),
        ),
        (
            tr("only the last block: feed each block's output into the next"),
            F.linear(last_block, model.W_e.weight),
        ),
        (tr("only the last position: return the logits of every position"), expected[..., -1, :]),
    ]


def windowed_logits(model, ids, width=None):
    """Position i's logits from the `width` (default n_ctx) tokens that end at i, one window
    at a time; the first `width` positions from one pass."""
    width = width or model.config.n_ctx
    return windows(model, ids, 1 - width, 0, head=width)


def windows(model, ids, first: int, last: int, head: int | None = None):
    """The first `head` (default n_ctx) positions from one pass, then position t's logits
    from the last position of ids[t + first : t + last + 1]. The right window is
    first = 1 - n_ctx, last = 0 (windowed_logits); others are the usual mistakes."""
    head = head or model.config.n_ctx
    later = [
        reference_logits(model, ids[..., t + first : t + last + 1])[..., -1:, :]
        for t in range(head, ids.shape[-1])
    ]
    return torch.cat([reference_logits(model, ids[..., :head]), *later], dim=-2)


def chunks(model, ids):
    """The text cut into separate n_ctx-token pieces, each run on its own."""
    k = model.config.n_ctx
    pieces = [reference_logits(model, ids[..., i : i + k]) for i in range(0, ids.shape[-1], k)]
    return torch.cat(pieces, dim=-2)


def window_mistakes(model, ids):
    k = model.config.n_ctx
    return [
        (
            tr(
                "the text was cut into separate chunks of n_ctx = {n_ctx} tokens: the first "
                "positions of each chunk see almost nothing before them. Position i needs the "
                "n_ctx tokens that end at it, a window that slides by one token",
                n_ctx=k,
            ),
            lambda: chunks(model, ids),
        ),
        (
            tr(
                "each window is one token short: position i sees the n_ctx tokens "
                "u_(i-n_ctx+1) .. u_i, itself included"
            ),
            lambda: windowed_logits(model, ids, k - 1),
        ),
        (
            tr(
                "each window after the first is one token short: position i sees the n_ctx "
                "tokens u_(i-n_ctx+1) .. u_i, itself included"
            ),
            lambda: windows(model, ids, -k + 2, 0),
        ),
        (
            tr(
                "each window ends one token early, at u_(i-1): position i's logits come from "
                "the window that ends at u_i itself"
            ),
            lambda: windows(model, ids, -k, -1),
        ),
        (
            tr(
                "only the first n_ctx = {n_ctx} positions: a text longer than the context "
                "still needs logits at every position",
                n_ctx=k,
            ),
            lambda: reference_logits(model, ids[..., :k]),
        ),
        (
            tr(
                "only the last n_ctx = {n_ctx} positions: a text longer than the context "
                "still needs logits at every position",
                n_ctx=k,
            ),
            lambda: reference_logits(model, ids[..., -k:]),
        ),
    ]


def count(x) -> torch.Tensor:
    return torch.tensor(int(x), dtype=torch.int64)


def counted(x) -> torch.Tensor:
    """The answer's count as a tensor; a float is refused, even a whole one."""
    whole = isinstance(x, numbers.Integral) or (
        isinstance(x, torch.Tensor) and x.numel() == 1 and not x.is_floating_point()
    )
    if not whole:
        raise Rejected(
            tr("expected a whole number, got {got}", got=describe(x)),
            tr("a count is an int: sum the sizes as ints, with no division or float()"),
        )
    return count(x)


@leaves_state_alone
def check_parameter_count(fn) -> CheckResult:
    """fn(vocab_size, n_ctx, d_model, n_layers, d_ff) must count GPT-1's parameters: W_e
    (once: the output layer is tied to it), W_p, and per block W_Q, W_K, W_V, W_O with biases,
    the two feed-forward layers with biases and two LayerNorms with a gain and a bias each.
    The reference counts the parameters of torch's own modules: nn.Embedding, a W_p tensor and
    nn.TransformerEncoderLayer per block."""
    check_function("fn", fn)
    cases = []
    for name, V, n_ctx, d, L, d_ff in (
        (tr("the course's small model"), 41, 32, 64, 2, 256),
        (tr("d_ff not 4 d_model"), 9, 8, 16, 3, 24),
        (tr("GPT-1 as published"), 40478, 512, 768, 12, 3072),
    ):
        layer = nn.TransformerEncoderLayer(d, 1, dim_feedforward=d_ff, batch_first=True)
        per_block = sum(p.numel() for p in layer.parameters())
        total = V * d + n_ctx * d + L * per_block

        ffn = d * d_ff + d_ff + d_ff * d + d
        norms = 4 * d
        cases.append(
            Case(
                name,
                f"vocab_size = {V}, n_ctx = {n_ctx}, d_model = {d}, n_layers = {L}, d_ff = {d_ff}",
                lambda f, args=(V, n_ctx, d, L, d_ff): counted(f(*args)),
                count(total),
                atol=0.0,
                mistakes=[
                    (
                        tr("W_e counted twice: the output layer is tied to it, h_L W_eᵀ"),
                        count(total + V * d),
                    ),
                    (tr("W_p is missing: n_ctx × d_model position rows"), count(total - n_ctx * d)),
                    (
                        tr("the biases are missing: every nn.Linear has one, d_out numbers"),
                        count(total - L * (4 * d + d_ff + d)),
                    ),
                    (
                        tr("the LayerNorms are missing: two per block, a gain and a bias each"),
                        count(total - L * norms),
                    ),
                    (
                        tr(
                            "the attention's biases are missing: W_Q, W_K, W_V and W_O have "
                            "d_model each (4 d_model per block, as many as the two LayerNorms)"
                        ),
                        count(total - L * 4 * d),
                    ),
                    (
                        tr("one block only: multiply by n_layers"),
                        count(V * d + n_ctx * d + per_block),
                    ),
                    (
                        tr("d_ff is given: the feed-forward width is not always 4 d_model"),
                        count(total - L * ffn + L * (d * 4 * d + 4 * d + 4 * d * d + d)),
                    ),
                    (
                        tr("W_O is missing: four d_model × d_model matrices in attention"),
                        count(total - L * (d * d + d)),
                    ),
                    (
                        tr("one LayerNorm per block: there are two, one after each sublayer"),
                        count(total - L * norms // 2),
                    ),
                    (
                        tr("one bias of d_model is missing: W_Q, W_K, W_V and W_O have one each"),
                        count(total - L * d),
                    ),
                ],
            )
        )
    return run_cases(
        "parameter_count",
        fn,
        cases,
        tr("return the number of parameters."),
    )
