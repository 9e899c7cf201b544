"""Checkers for notebook 07, the GPT-1 block: the block, the whole forward pass, the parameter
count."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

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
    """cls(d_model, n_heads, d_ff) has attn (with W_Q, W_K, W_V, W_O), ln_1, ffn
    (nn.Sequential(nn.Linear, nn.GELU, nn.Linear)) and ln_2; forward(h) is the causal post-LN
    block. The reference is nn.TransformerEncoderLayer(norm_first=False) with a causal mask,
    the answer's weights (its LayerNorms' γ and β and zero biases made random first) and
    GPT-1's tanh GELU, whatever the answer's ffn holds."""
    check_class("cls", cls)
    g = seeded(13)
    cases = []
    for name, d_model, h, d_ff, shape in (
        (tr("d = 8, 2 heads, d_ff = 32, one sentence"), 8, 2, 32, (5, 8)),
        (tr("d = 12, 4 heads, d_ff = 20, batched"), 12, 4, 20, (2, 4, 12)),
    ):
        x = randn(g, *shape)

        def run(answer, d_model=d_model, h=h, d_ff=d_ff, x=x):
            block = build(answer, d_model, h, d_ff)  # γ, β and zero biases made random
            return block_comparison(block, x, d_model, h, d_ff)

        cases.append(Case(name, shapes(h=x), run, derived=True))
    return run_cases(
        "GPT1Block",
        cls,
        cases,
        tr("build attn, ln_1, ffn, ln_2 and the post-LN forward."),
    )


def block_comparison(block, x, d_model, h, d_ff):
    W, (ln_1, ln_2), ffn = block_parts(block)
    reference = reference_layer(block, h)
    n = x.shape[-2]
    causal = torch.zeros(n, n).masked_fill(torch.ones(n, n, dtype=torch.bool).triu(1), NEG_INF)
    with torch.no_grad():
        block.eval()
        got = block(x)
        batched = x if x.dim() == 3 else x.unsqueeze(0)
        expected = reference(batched, src_mask=causal, is_causal=True)
        unmasked = reference(batched)
        reference.norm_first = True
        pre_ln = reference(batched, src_mask=causal, is_causal=True)
        squeeze = (lambda t: t) if x.dim() == 3 else (lambda t: t.squeeze(0))
        attended = reference.self_attn(batched, batched, batched, attn_mask=causal)[0]
        no_residual = ln_1(attended)
        no_residual = ln_2(no_residual + ffn(no_residual))
        g = ln_1(batched + attended)
        no_second_residual = ln_2(ffn(g))
        first = ln_1(batched + ffn(batched))
        sublayers_swapped = ln_2(
            first + reference.self_attn(first, first, first, attn_mask=causal)[0]
        )

        def variant(**mistake):
            layer = reference_layer(block, h, **mistake)
            return squeeze(layer(batched, src_mask=causal, is_causal=True))

        def plain_norm(x):  # a LayerNorm that ignores its own γ and β
            return F.layer_norm(x, (d_model,), eps=ln_1.eps)

        def gelu_ffn(x):
            return reference.linear2(gpt1_gelu(reference.linear1(x)))

        g_plain = plain_norm(batched + attended)
        no_affine = squeeze(plain_norm(g_plain + gelu_ffn(g_plain)))
        mistakes = [
            (
                tr("no causal mask: each position sees the future; the block must be masked"),
                squeeze(unmasked),
            ),
            (
                tr(
                    "this is pre-LN (GPT-2's order): GPT-1 normalises after each residual sum, "
                    "h = ln_1(h + attn(h))"
                ),
                squeeze(pre_ln),
            ),
            (
                tr(
                    "the first residual connection is missing: ln_1(h + attn(h)), not ln_1(attn(h))"
                ),
                squeeze(no_residual),
            ),
            (
                tr("the second residual connection is missing: ln_2(g + ffn(g)), not ln_2(ffn(g))"),
                squeeze(no_second_residual),
            ),
            (
                tr("the feed-forward layer runs first: attention, then the feed-forward layer"),
                squeeze(sublayers_swapped),
            ),
            (
                tr(
                    "ln_1 and ln_2 are swapped: ln_1 follows the attention, ln_2 the "
                    "feed-forward layer"
                ),
                lambda: variant(swap_norms=True),
            ),
            (
                tr(
                    "the LayerNorms' own γ and β are not used: call ln_1 and ln_2 (the modules), "
                    "not a LayerNorm without weights"
                ),
                no_affine,
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
                lambda: variant(activation=lambda x: x),
            ),
            (
                tr(
                    'the exact GELU: GPT-1 uses its tanh approximation, nn.GELU(approximate="tanh")'
                ),
                lambda: variant(activation=F.gelu),
            ),
        ]
    return got, squeeze(expected), mistakes


@leaves_state_alone
def check_gpt1_forward(fn) -> CheckResult:
    """fn(model, ids) must give the logits h_L W_eᵀ (..., n, n_vocab) of an nbhelpers GPT1, built
    from its parts: h_0 = W_e[ids] + W_p[:n], each block in turn, then the tied output. The
    reference computes the same from torch's own pieces: F.embedding, each block's weights in
    an nn.TransformerEncoderLayer with a causal mask, and F.linear with W_e."""
    check_function("fn", fn)
    model = small_model(17)
    g = seeded(17)
    cases = []
    for name, ids in (
        ("<SOS> 犬 が 河岸 を 歩く", SENTENCE),
        (tr("a batch of 3 sentences"), torch.randint(0, len(VOCAB), (3, 7), generator=g)),
    ):
        n = ids.shape[-1]
        causal = torch.zeros(n, n).masked_fill(torch.ones(n, n, dtype=torch.bool).triu(1), NEG_INF)
        with torch.no_grad():
            h0 = F.embedding(ids, model.W_e.weight) + model.W_p[:n]
            batched = h0 if h0.dim() == 3 else h0.unsqueeze(0)
            # the reference, and two usual mistakes: no W_p, and W_p taken one row late
            tracks = [
                batched,
                batched - model.W_p[:n],
                batched - model.W_p[:n] + model.W_p[1 : n + 1],
            ]
            for block in model.blocks:
                layer = reference_layer(block, model.config.n_heads)
                tracks = [layer(t, src_mask=causal, is_causal=True) for t in tracks]
            h, no_positions, shifted = (t if ids.dim() == 2 else t.squeeze(0) for t in tracks)
            expected = F.linear(h, model.W_e.weight)
            mistakes = [
                (
                    tr("W_p is missing: h_0 = W_e[ids] + W_p[:n], the position of each token"),
                    F.linear(no_positions, model.W_e.weight),
                ),
                (
                    tr(
                        "the positions are shifted by one: the first token is at position 0, "
                        "so add W_p[:n], not W_p[1 : n + 1]"
                    ),
                    F.linear(shifted, model.W_e.weight),
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
                    F.linear(
                        reference_layer(model.blocks[-1], model.config.n_heads)(
                            batched, src_mask=causal, is_causal=True
                        ).reshape(h.shape),
                        model.W_e.weight,
                    ),
                ),
                (
                    tr("only the last position: return the logits of every position"),
                    expected[..., -1, :],
                ),
            ]
        cases.append(
            Case(
                name,
                shapes(ids=ids),
                lambda f, ids=ids: f(model, ids),
                expected,
                atol=1e-4,
                mistakes=mistakes,
            )
        )
    return run_cases(
        "gpt1_forward",
        fn,
        cases,
        tr("return the next-token logits at every position."),
    )


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

        def count(x):
            return torch.tensor(int(x), dtype=torch.int64)

        ffn = d * d_ff + d_ff + d_ff * d + d
        norms = 4 * d
        cases.append(
            Case(
                name,
                f"vocab_size = {V}, n_ctx = {n_ctx}, d_model = {d}, n_layers = {L}, d_ff = {d_ff}",
                lambda f, args=(V, n_ctx, d, L, d_ff): count(f(*args)),
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
                ],
            )
        )
    return run_cases(
        "parameter_count",
        fn,
        cases,
        tr("return the number of parameters."),
    )
