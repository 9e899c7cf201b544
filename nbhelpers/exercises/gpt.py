"""Checkers for the GPT-1 exercises of notebooks 06-08, each against torch's own modules."""

from __future__ import annotations

import copy
import math

import torch
import torch.nn.functional as F
from torch import nn

from ..gpt1 import GPT1, GPT1Config
from ..inference import generate
from ..support.language import tr
from .attention import attempt, bias_of, build, linear_weights
from .core import (
    FAILED,
    NOT_ATTEMPTED,
    PASSED,
    Case,
    CheckResult,
    Rejected,
    check_class,
    check_function,
    first_line,
    leaves_state_alone,
    randn,
    run_cases,
    seeded,
    shapes,
)

# The running example: <SOS> 犬 が 河岸 を 歩く in a vocabulary of 9 tokens.
VOCAB = ["<PAD>", "<SOS>", "<EOS>", "犬", "猫", "が", "河岸", "を", "歩く"]
SENTENCE = torch.tensor([1, 3, 5, 6, 7, 8])
NEG = float("-inf")


def id_cases(seed: int):
    g = seeded(seed)
    V = len(VOCAB)
    return [
        ("<SOS> 犬 が 河岸 を 歩く", SENTENCE, V),
        (tr("a batch of 3 sentences"), torch.randint(0, V, (3, 4), generator=g), V),
        (tr("a repeated token"), torch.tensor([3, 3, 5, 3]), V),
        (tr("two batch dims, V = 20"), torch.randint(0, 20, (2, 2, 5), generator=g), 20),
    ]


# --- 06: h_0, and back to the tokens -----------------------------------------------------------


@leaves_state_alone
def check_embed(fn) -> CheckResult:
    """fn(ids, W_e, W_p, start=0) must give h_0 = U W_e + W_p for the n tokens at positions
    start .. start + n - 1: start = 0 for a whole sentence, the number of cached tokens for a
    continuation (notebook 10). The lookup is torch's own nn.Embedding."""
    check_function("fn", fn)
    g = seeded(10)
    cases = []
    for (name, ids, V), start in zip(id_cases(11), (0, 0, 2, 3), strict=True):
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
                shapes(ids=ids, W_e=W_e, W_p=W_p) + f", start = {start}",
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
        tr(
            "Replace raise NotImplementedError: return h_0 = U W_e + W_p at positions "
            "start .. start + n - 1."
        ),
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
                ],
            )
        )
    return run_cases(
        "decode_embedding",
        fn,
        cases,
        tr("Replace raise NotImplementedError: return the ids whose rows of W_e made h_0."),
    )


# --- 07: the block ----------------------------------------------------------------------------


@leaves_state_alone
def check_gpt1_block(cls) -> CheckResult:
    """cls(d_model, n_heads, d_ff) has attn (with W_Q, W_K, W_V, W_O), ln_1, ffn
    (nn.Sequential(nn.Linear, nn.GELU, nn.Linear)) and ln_2; forward(h) is the causal post-LN
    block. The reference is nn.TransformerEncoderLayer(norm_first=False) with a causal mask
    and the answer's weights and GELU."""
    check_class("cls", cls)
    g = seeded(13)
    cases = []
    for name, d_model, h, d_ff, shape in (
        (tr("d = 8, 2 heads, d_ff = 32, one sentence"), 8, 2, 32, (5, 8)),
        (tr("d = 12, 4 heads, d_ff = 20, batched"), 12, 4, 20, (2, 4, 12)),
    ):
        x = randn(g, *shape)

        def run(answer, d_model=d_model, h=h, d_ff=d_ff, x=x):
            block = build(answer, d_model, h, d_ff)
            return block_comparison(block, x, d_model, h, d_ff)

        cases.append(Case(name, shapes(h=x), run, derived=True))
    return run_cases(
        "GPT1Block",
        cls,
        cases,
        tr(
            "Replace raise NotImplementedError: build attn, ln_1, ffn, ln_2 and the post-LN "
            "forward."
        ),
    )


def block_parts(block: nn.Module):
    attn = getattr(block, "attn", None)
    if attn is None:
        raise AttributeError(f"{type(block).__name__} needs an attribute attn")
    W = linear_weights(attn, "W_Q", "W_K", "W_V", "W_O")
    norms = []
    for name in ("ln_1", "ln_2"):
        norm = getattr(block, name, None)
        if not isinstance(norm, nn.LayerNorm):
            raise AttributeError(f"{type(block).__name__} needs {name}, an nn.LayerNorm")
        norms.append(norm)
    ffn = getattr(block, "ffn", None)
    if not (isinstance(ffn, nn.Sequential) and len(ffn) == 3):
        raise AttributeError(
            f"{type(block).__name__} needs ffn = nn.Sequential(nn.Linear, nn.GELU, nn.Linear)"
        )
    return W, norms, ffn


def block_comparison(block, x, d_model, h, d_ff):
    W, (ln_1, ln_2), ffn = block_parts(block)
    reference = reference_layer(block, h)
    n = x.shape[-2]
    causal = torch.zeros(n, n).masked_fill(torch.ones(n, n, dtype=torch.bool).triu(1), NEG)
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
        ]
    return got, squeeze(expected), mistakes


# --- 07: the whole forward pass ---------------------------------------------------------------


def reference_layer(block, n_heads: int) -> nn.TransformerEncoderLayer:
    """torch's post-LN encoder layer holding a GPT1Block's weights: with a causal mask it is
    the same block, computed by torch's own code."""
    W, (ln_1, ln_2), ffn = block_parts(block)
    d_model, d_ff = ffn[0].in_features, ffn[0].out_features
    reference = nn.TransformerEncoderLayer(
        d_model,
        n_heads,
        dim_feedforward=d_ff,
        dropout=0.0,
        activation=lambda x: ffn[1](x),
        batch_first=True,
        norm_first=False,
    )
    qkv = [W[k] for k in ("W_Q", "W_K", "W_V")]
    with torch.no_grad():
        reference.self_attn.in_proj_weight.copy_(torch.cat([layer.weight for layer in qkv]))
        reference.self_attn.in_proj_bias.copy_(torch.cat([bias_of(layer) for layer in qkv]))
        reference.self_attn.out_proj.load_state_dict(W["W_O"].state_dict())
        reference.linear1.load_state_dict(ffn[0].state_dict())
        reference.linear2.load_state_dict(ffn[2].state_dict())
        reference.norm1.load_state_dict(ln_1.state_dict())
        reference.norm2.load_state_dict(ln_2.state_dict())
    return reference.eval()


def small_model(seed: int, *, n_layers: int = 2, std: float = 0.3) -> GPT1:
    """A GPT1 over the 9-token vocabulary with weights larger than GPT-1's init, so that every
    part (positions, blocks, the tied output) shows in the logits."""
    torch.manual_seed(seed)
    config = GPT1Config(vocab_size=len(VOCAB), n_ctx=8, d_model=16, n_layers=n_layers, n_heads=2)
    model = GPT1(config).eval()
    g = seeded(seed)
    with torch.no_grad():
        for weight in (model.W_e.weight, model.W_p):
            weight.normal_(std=std, generator=g)
    return model


@leaves_state_alone
def check_gpt1_forward(fn) -> CheckResult:
    """fn(model, ids) must give the logits h_L W_eᵀ (..., n, V) of an nbhelpers GPT1, built
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
        causal = torch.zeros(n, n).masked_fill(torch.ones(n, n, dtype=torch.bool).triu(1), NEG)
        with torch.no_grad():
            h0 = F.embedding(ids, model.W_e.weight) + model.W_p[:n]
            batched = h0 if h0.dim() == 3 else h0.unsqueeze(0)
            h, no_positions = batched, batched - model.W_p[:n]
            for block in model.blocks:
                layer = reference_layer(block, model.config.n_heads)
                h = layer(h, src_mask=causal, is_causal=True)
                no_positions = layer(no_positions, src_mask=causal, is_causal=True)
            h = h if ids.dim() == 2 else h.squeeze(0)
            no_positions = no_positions if ids.dim() == 2 else no_positions.squeeze(0)
            expected = F.linear(h, model.W_e.weight)
            mistakes = [
                (
                    tr("W_p is missing: h_0 = W_e[ids] + W_p[:n], the position of each token"),
                    F.linear(no_positions, model.W_e.weight),
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
        tr("Replace raise NotImplementedError: return h_L W_eᵀ for every position."),
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
        tr("Replace raise NotImplementedError: return the number of parameters."),
    )


# --- 08: one training step, in micro-batches --------------------------------------------------


def parameters_of(model: nn.Module) -> torch.Tensor:
    return torch.cat([p.detach().flatten() for p in model.parameters()])


def as_loss(loss) -> torch.Tensor:
    """The learner's loss, a float or a 0-d tensor, as a float64 value to compare."""
    value = loss.detach() if isinstance(loss, torch.Tensor) else loss
    return torch.tensor(float(value), dtype=torch.float64)


class PlainSGD:
    """p <- p - lr · ∂loss/∂p, with the zero_grad() and step() of a torch optimiser.

    torch.optim.SGD would do the same (tests/test_exercises.py compares them), but its first
    step loads torch's compiler stack, seconds on a laptop; a checker must answer in one."""

    def __init__(self, parameters, lr: float):
        self.parameters, self.lr = list(parameters), lr

    def zero_grad(self, set_to_none: bool = True) -> None:
        for p in self.parameters:
            if set_to_none:
                p.grad = None
            elif p.grad is not None:
                p.grad.zero_()

    @torch.no_grad()
    def step(self) -> None:
        for p in self.parameters:
            if p.grad is not None:
                p.add_(p.grad, alpha=-self.lr)


def with_stale_gradients(model: nn.Module) -> nn.Module:
    """A copy of `model` whose parameters still hold gradients from an earlier step (a deep
    copy drops them), for a missing zero_grad to add in."""
    model = copy.deepcopy(model)
    for p in model.parameters():
        p.grad = torch.full_like(p, 0.01)
    return model


def reference_step(
    model,
    ids,
    pad_id,
    lr,
    micro_batch,
    *,
    shift=True,
    backwards=False,
    ignore=True,
    weighting="tokens",
    zero="once",
    step="once",
):
    """The full batch's SGD step, made in micro-batches on a copy of `model` (its stale
    gradients included) and written with F.cross_entropy; the keywords make the usual
    mistakes. Returns (the loss reported, the parameters after)."""
    model = with_stale_gradients(model)
    optimizer = PlainSGD(model.parameters(), lr=lr)

    def pair(chunk):
        if not shift:
            return model(chunk), chunk
        if backwards:
            return model(chunk)[:, 1:], chunk[:, :-1]
        return model(chunk[:, :-1]), chunk[:, 1:]

    def counted(targets):
        return int((targets != pad_id).sum()) if ignore else targets.numel()

    chunks = ids.split(micro_batch)
    total = sum(counted(chunk[:, 1:] if shift else chunk) for chunk in chunks)
    if zero == "once":
        optimizer.zero_grad()
    reported = 0.0
    for chunk in chunks:
        if zero == "each":
            optimizer.zero_grad()
        logits, targets = pair(chunk)
        summed = F.cross_entropy(
            logits.flatten(0, 1),
            targets.flatten(),
            ignore_index=pad_id if ignore else -100,
            reduction="sum",
        )
        if weighting == "tokens":
            loss = summed / total
        elif weighting == "means":
            loss = summed / counted(targets) / len(chunks)
        else:
            loss = summed
        loss.backward()
        reported += float(loss.detach())
        if step == "each":
            optimizer.step()
    if step == "once":
        optimizer.step()
    return torch.tensor(reported, dtype=torch.float64), parameters_of(model)


@leaves_state_alone
def check_accumulated_step(fn) -> CheckResult:
    """fn(model, optimizer, ids, pad_id, micro_batch) must make, in micro-batches of
    `micro_batch` sentences, exactly the training step that the whole batch ids (B, n) would
    make: position t predicts token t + 1, the loss is the mean cross-entropy over all the
    batch's targets that are not pad_id (-L1 / N), old gradients cleared once, one backward
    per micro-batch, one optimiser step at the end; it returns the batch's loss. The reference
    is the same step written with F.cross_entropy and plain SGD (PlainSGD, checked against
    torch.optim.SGD in the tests) on a copy of the same weights; both start from the same
    stale gradients, which a missing zero_grad would add in."""
    check_function("fn", fn)
    lr = 0.5  # plain SGD: the step shows the gradient's size, which Adam would hide
    two = torch.tensor([[1, 3, 5, 6, 7, 8, 2], [1, 4, 5, 8, 2, 0, 0]])
    four = torch.tensor(
        [[1, 3, 5, 8, 2, 0], [1, 4, 5, 8, 2, 0], [1, 3, 5, 6, 7, 8], [1, 4, 5, 2, 0, 0]]
    )
    cases = []
    for name, ids, micro in (
        (tr("two sentences, one padded, one at a time"), two, 1),
        (tr("four sentences in micro-batches of 2"), four, 2),
        (tr("the whole batch at once"), two, 2),
    ):
        model = small_model(18, n_layers=1, std=0.3)

        def run(answer, ids=ids, micro=micro, model=model):
            mine = with_stale_gradients(model).train()
            seen = []
            mine.register_forward_pre_hook(lambda module, args: seen.append(len(args[0])))
            optimizer = PlainSGD(mine.parameters(), lr=lr)
            loss = answer(mine, optimizer, ids.clone(), 0, micro)
            if seen and max(seen) > micro:
                raise Rejected(
                    tr(
                        "the model was called on {seen} sentences at once, with micro_batch = "
                        "{micro}",
                        seen=max(seen),
                        micro=micro,
                    ),
                    tr("cut ids into micro-batches, ids.split(micro_batch), and run each alone"),
                )
            got = (as_loss(loss), parameters_of(mine))
            split = micro < len(ids)

            def variant(**mistake):
                return reference_step(model, ids, 0, lr, micro, **mistake)

            mistakes = [
                (
                    tr(
                        "the loss is the mean of the micro-batches' means: they hold different "
                        "numbers of tokens, so divide each micro-batch's summed loss by the "
                        "whole batch's token count"
                    ),
                    (lambda: variant(weighting="means")) if split else None,
                ),
                (
                    tr(
                        "the targets are not shifted: the logits at position t must be "
                        "compared with token t + 1 (model(ids[:, :-1]) against ids[:, 1:])"
                    ),
                    lambda: variant(shift=False),
                ),
                (
                    tr("shifted the wrong way: position t predicts token t + 1, not t - 1"),
                    lambda: variant(backwards=True),
                ),
                (
                    tr("the <PAD> targets count: pass ignore_index=pad_id to F.cross_entropy"),
                    lambda: variant(ignore=False),
                ),
                (
                    tr("the loss is a sum: the mean over the predicted tokens is -L1 / N"),
                    lambda: variant(weighting="sum"),
                ),
                (
                    tr(
                        "the old gradients were not cleared: call optimizer.zero_grad() once, "
                        "before the first backward"
                    ),
                    lambda: variant(zero="none"),
                ),
                (
                    tr(
                        "zero_grad inside the loop: each micro-batch wipes the gradients of "
                        "the ones before it; clear them once, before the loop"
                    ),
                    (lambda: variant(zero="each")) if split else None,
                ),
                (
                    tr("a step per micro-batch: accumulate the gradients, then step once"),
                    (lambda: variant(step="each")) if split else None,
                ),
                (
                    tr("the weights did not move: call optimizer.step() after the loop"),
                    lambda: variant(step="none"),
                ),
            ]
            return got, variant(), mistakes

        inputs = shapes(ids=ids) + f", pad_id = 0, micro_batch = {micro}"
        cases.append(Case(name, inputs, run, derived=True, atol=1e-5))
    return run_cases(
        "accumulated_step",
        fn,
        cases,
        tr(
            "Replace raise NotImplementedError: one step of the whole batch, made in "
            "micro-batches; return the loss."
        ),
    )


# --- 08-09: the objective, sampling, greedy decoding, top-p -----------------------------------


@leaves_state_alone
def check_log_likelihood(fn) -> CheckResult:
    """fn(logits, ids) must give L1 = Σ_t log P(u_{t+1} | u_<=t) of shape (...): logits
    (..., n, V) from model(ids) and ids (..., n). A sum over the predicted positions, not a
    mean, not its negative."""
    check_function("fn", fn)
    g = seeded(14)
    cases = []
    for name, shape, V in (
        ("<SOS> 犬 が 河岸 を 歩く", (6,), len(VOCAB)),
        (tr("a batch of 4"), (4, 7), 11),
        (tr("two batch dims"), (2, 3, 5), 8),
    ):
        ids = SENTENCE if shape == (6,) else torch.randint(0, V, shape, generator=g)
        logits = randn(g, *shape, V, scale=2.0)
        per_token = -F.cross_entropy(
            logits[..., :-1, :].reshape(-1, V), ids[..., 1:].reshape(-1), reduction="none"
        ).reshape(ids[..., 1:].shape)
        log_probs = F.log_softmax(logits, dim=-1)
        unshifted = log_probs.gather(-1, ids.unsqueeze(-1)).squeeze(-1)
        cases.append(
            Case(
                name,
                shapes(logits=logits, ids=ids),
                lambda f, logits=logits, ids=ids: f(logits, ids),
                per_token.sum(-1),
                mistakes=[
                    (
                        tr("a mean where the objective is a sum over the predicted positions"),
                        per_token.mean(-1),
                    ),
                    (
                        tr("this is the loss, -L1: L1 itself is a sum of log-probabilities (≤ 0)"),
                        -per_token.sum(-1),
                    ),
                    (
                        tr(
                            "off by one: position t predicts token t + 1, so compare "
                            "logits[..., :-1] with ids[..., 1:]"
                        ),
                        unshifted.sum(-1),
                    ),
                    (
                        tr(
                            "the last position predicts nothing here: drop logits[..., -1] "
                            "and score ids[..., 1:]"
                        ),
                        unshifted[..., 1:].sum(-1),
                    ),
                    (
                        tr("probabilities, not log-probabilities: take the log (log_softmax)"),
                        F.softmax(logits[..., :-1, :], -1)
                        .gather(-1, ids[..., 1:, None])
                        .squeeze(-1)
                        .sum(-1),
                    ),
                ],
            )
        )
    return run_cases(
        "log_likelihood",
        fn,
        cases,
        tr("Replace raise NotImplementedError: return L1, the sum of log P(u_{t+1} | u_<=t)."),
    )


def filtered_distribution(logits, temperature, top_k):
    """The exact distribution the sampler must draw from: softmax(logits / T) over the top k."""
    scaled = logits / temperature
    if top_k is not None:
        kth = scaled.topk(top_k).values[-1]
        scaled = scaled.masked_fill(scaled < kth, -math.inf)
    return F.softmax(scaled, dim=-1)


@leaves_state_alone
def check_sample_next_token(fn, draws: int = 1000) -> CheckResult:
    """fn(logits, temperature, top_k, generator) for logits (V,) must return one token id
    drawn from softmax(logits / T) restricted to the top_k largest logits (None: all).

    Checked statistically: `draws` seeded draws per case, compared with the exact filtered
    distribution by Pearson's chi-square test at significance 1e-4, and any token outside
    the top k fails at once. A correct sampler is rejected with probability about 1e-4 per
    case (5e-4 for the 5 cases): the false-alarm rate. The draws are seeded, so the verdict
    on a given answer is the same on every run.
    """
    check_function("fn", fn)
    logits = torch.tensor([2.0, 1.0, 0.5, 0.0, -0.5, -1.0, 1.5, -2.0])
    settings = [
        (tr("T = 1, all tokens"), 1.0, None),
        (tr("T = 0.5 (sharper)"), 0.5, None),
        (tr("T = 2 (flatter)"), 2.0, None),
        ("top_k = 3", 1.0, 3),
        ("T = 0.7, top_k = 2", 0.7, 2),
    ]
    exercise = "sample_next_token"
    for number, (name, temperature, top_k) in enumerate(settings, start=1):
        where = tr(
            'case {number} of {total}, "{name}": {inputs}',
            number=number,
            total=len(settings),
            name=name,
            inputs=f"logits {tuple(logits.shape)}, temperature = {temperature:g}, top_k = {top_k}",
        )
        generator = torch.Generator().manual_seed(100 + number)
        try:
            counts = torch.zeros(len(logits))
            for _ in range(draws):
                token = fn(logits.clone(), temperature, top_k, generator)
                token = int(token)
                if not 0 <= token < len(logits):
                    return CheckResult(
                        exercise,
                        FAILED,
                        [
                            f"✗ {exercise}: {where}",
                            "  "
                            + tr(
                                "returned {token}, not a token id in [0, {size})",
                                token=token,
                                size=len(logits),
                            ),
                        ],
                        len(settings),
                    )
                counts[token] += 1
        except NotImplementedError:
            return CheckResult(
                exercise,
                NOT_ATTEMPTED,
                [
                    tr(
                        "… {exercise}: not attempted. {todo}",
                        exercise=exercise,
                        todo=tr(
                            "Replace raise NotImplementedError: return one token id drawn from "
                            "softmax(logits / T) over the top_k largest logits."
                        ),
                    ),
                ],
            )
        except Exception as error:
            return CheckResult(
                exercise,
                FAILED,
                [
                    f"✗ {exercise}: {where}",
                    "  " + tr("the answer raised {error}", error=first_line(error)),
                ],
                len(settings),
            )
        expected = filtered_distribution(logits, temperature, top_k)
        problem = chi_square_problem(counts, expected, draws)
        if problem:
            hint = sampling_hint(counts, draws, logits, temperature, top_k)
            lines = [f"✗ {exercise}: {where}", f"  {problem}"]
            return CheckResult(
                exercise,
                FAILED,
                lines + (["  " + tr("hint: {hint}", hint=hint)] if hint else []),
                len(settings),
            )
    names = [setting[0] for setting in settings]
    return CheckResult(
        exercise,
        PASSED,
        [
            tr(
                "✓ {exercise}: all {n} cases passed ({names})",
                exercise=exercise,
                n=len(settings),
                names="; ".join(names),
            )
            + tr(", {draws} draws each, chi-square at significance 1e-4", draws=draws),
        ],
        len(settings),
    )


# Pearson's chi-square critical values at significance 1e-4, by degrees of freedom.
CHI2_CRITICAL = {1: 15.14, 2: 18.42, 3: 21.11, 4: 23.51, 5: 25.74, 6: 27.86, 7: 29.88}


def chi_square_problem(counts, expected, draws) -> str | None:
    outside = (expected == 0) & (counts > 0)
    if outside.any():
        return tr(
            "drew {count} tokens outside the top k (probability 0)",
            count=int(counts[outside].sum()),
        )
    support = expected > 0
    dof = int(support.sum()) - 1
    if dof == 0:
        return None
    wanted = expected[support] * draws
    statistic = float(((counts[support] - wanted) ** 2 / wanted).sum())
    if statistic > CHI2_CRITICAL[dof]:
        return tr(
            "the draws do not follow softmax(logits / T) over the top k: chi-square "
            "{statistic:.0f} > {critical} ({dof} degrees of freedom, significance 1e-4)",
            statistic=statistic,
            critical=CHI2_CRITICAL[dof],
            dof=dof,
        )
    return None


def sampling_hint(counts, draws, logits, temperature, top_k) -> str | None:
    """Name the likely mistake: the first candidate distribution that the draws fit (the same
    chi-square test the answer failed against the right one)."""
    candidates = [
        (
            tr("the temperature multiplies the logits: divide them by T"),
            filtered_distribution(logits * temperature, 1.0, top_k),
        ),
        (
            tr("top_k is ignored: keep only the k largest logits before softmax"),
            filtered_distribution(logits, temperature, None),
        ),
        (
            tr("the temperature is ignored: divide the logits by T before softmax"),
            filtered_distribution(logits, 1.0, top_k),
        ),
        (
            tr("always the most likely token: that is greedy decoding, not sampling"),
            F.one_hot(logits.argmax(), len(logits)).double(),
        ),
    ]
    for hint, p in candidates:
        if not torch.allclose(
            p.double(), filtered_distribution(logits, temperature, top_k).double()
        ):
            if chi_square_problem(counts, p, draws) is None:
                return hint
    return None


@leaves_state_alone
def check_greedy_generate(fn) -> CheckResult:
    """fn(model, ids, max_new_tokens, eos_id) for ids (n,) must return the prompt followed by
    the generated tokens, as nbhelpers' greedy generate (top_k=1) does: stop after eos_id."""
    check_function("fn", fn)
    torch.manual_seed(0)
    config = GPT1Config(vocab_size=len(VOCAB), n_ctx=16, d_model=16, n_layers=1, n_heads=2)
    model = GPT1(config).eval()
    g = seeded(15)
    with torch.no_grad():
        for weight in model.parameters():
            if weight.dim() == 2:  # larger weights than GPT-1's init: varied greedy tokens
                weight.normal_(std=0.5, generator=g)
    cases = []
    for name, prompt, steps, eos in (
        (tr("from <SOS>, 5 new tokens"), torch.tensor([1]), 5, None),
        (tr("犬 が, 8 new tokens"), torch.tensor([1, 3, 5]), 8, None),
        (tr("stop at eos_id"), torch.tensor([1, 3]), 12, None),
    ):
        expected = generate(model, prompt, steps, top_k=1, eos_id=eos)
        cases.append((name, prompt, steps, eos, expected))
    # The third case stops at a token the model first produces a few steps in: used as eos_id,
    # so that stopping is exercised on a real run.
    name, prompt, steps, _, _ = cases[2]
    free = generate(model, prompt, steps, top_k=1)[len(prompt) :].tolist()
    eos = next((t for i, t in enumerate(free) if i >= 2 and t not in free[:i]), free[-1])
    cases[2] = (name, prompt, steps, eos, generate(model, prompt, steps, top_k=1, eos_id=eos))
    checked = []
    for name, prompt, steps, eos, expected in cases:
        full = generate(model, prompt, steps, top_k=1)
        new = expected[len(prompt) :]
        mistakes = (
            [
                (tr("only the new tokens: return the prompt followed by them"), new),
                (tr("generation did not stop after eos_id was produced"), full),
                (tr("eos_id itself must be kept: stop after appending it"), expected[:-1]),
                (
                    tr("one token too many or too few: generate max_new_tokens tokens"),
                    generate(model, prompt, steps + 1, top_k=1, eos_id=eos),
                ),
            ]
            if eos is not None
            else [
                (tr("only the new tokens: return the prompt followed by them"), new),
                (tr("one token too few: generate max_new_tokens tokens"), expected[:-1]),
            ]
        )
        checked.append(
            Case(
                name + (f" (eos_id = {eos})" if eos is not None else ""),
                f"ids {tuple(prompt.shape)}, max_new_tokens = {steps}",
                lambda f, prompt=prompt, steps=steps, eos=eos: f(model, prompt, steps, eos),
                expected,
                atol=0.0,
                mistakes=mistakes,
            )
        )
    return run_cases(
        "greedy_generate",
        fn,
        checked,
        tr("Replace raise NotImplementedError: return the prompt and the greedy tokens."),
    )


@leaves_state_alone
def check_top_p_filter(fn) -> CheckResult:
    """fn(probs, p) for a distribution (V,) must keep the smallest set of most likely tokens
    whose probabilities sum to at least p (nucleus sampling, Holtzman et al. 2020), set the
    rest to 0 and renormalise. The reference sorts with torch.sort and cumsum, written here
    independently of nbhelpers."""
    check_function("fn", fn)
    probs = F.softmax(torch.tensor([2.0, 1.0, 0.5, 0.0, -0.5, -1.0, 1.5, -2.0]), -1)

    def nucleus(probs, p, *, include_crossing=True, renormalise=True, descending=True):
        values, order = probs.sort(descending=descending)
        before = values.cumsum(0) - values  # mass of the more likely tokens
        keep_sorted = before < p if include_crossing else values.cumsum(0) <= p
        keep = torch.zeros_like(probs, dtype=torch.bool).scatter(0, order, keep_sorted)
        kept = probs * keep
        return kept / kept.sum() if renormalise else kept

    cases = []
    for name, p in (
        ("p = 0.5", 0.5),
        ("p = 0.9", 0.9),
        (tr("p = 1: every token"), 1.0),
        (tr("p = 0.1: the top token alone"), 0.1),
    ):
        cases.append(
            Case(
                name,
                f"probs {tuple(probs.shape)}, p = {p:g}",
                lambda f, p=p: f(probs.clone(), p),
                nucleus(probs, p),
                atol=1e-6,
                mistakes=[
                    (
                        tr(
                            "the token that crosses p is left out: keep tokens until their sum "
                            "reaches p, that one included"
                        ),
                        nucleus(probs, p, include_crossing=False),
                    ),
                    (
                        tr("not renormalised: divide the kept probabilities by their sum"),
                        nucleus(probs, p, renormalise=False),
                    ),
                    (
                        tr("the least likely tokens were kept: sort in descending order"),
                        nucleus(probs, p, descending=False),
                    ),
                ],
            )
        )
    return run_cases(
        "top_p_filter",
        fn,
        cases,
        tr("Replace raise NotImplementedError: return the renormalised nucleus of probs."),
    )
