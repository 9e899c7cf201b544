"""Checkers for the GPT-1 exercises of notebooks 06-08, each against torch's own modules."""

from __future__ import annotations

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
    check_class,
    check_function,
    first_line,
    randn,
    run_cases,
    seeded,
    shapes,
)

# The running example: <SOS> 犬 が 河岸 を 歩く in a vocabulary of 9 tokens.
VOCAB = ["<PAD>", "<SOS>", "<EOS>", "犬", "猫", "が", "河岸", "を", "歩く"]
SENTENCE = torch.tensor([1, 3, 5, 6, 7, 8])


def id_cases(seed: int):
    g = seeded(seed)
    V = len(VOCAB)
    return [
        ("<SOS> 犬 が 河岸 を 歩く", SENTENCE, V),
        (tr("a batch of 3 sentences"), torch.randint(0, V, (3, 4), generator=g), V),
        (tr("a repeated token"), torch.tensor([3, 3, 5, 3]), V),
        (tr("two batch dims, V = 20"), torch.randint(0, 20, (2, 2, 5), generator=g), 20),
    ]


# --- 06: one-hot rows and h_0 -----------------------------------------------------------------


def check_one_hot(fn) -> CheckResult:
    """fn(ids, vocab_size) must give U: one row per token, 1.0 in its column, (..., n, V)."""
    check_function("fn", fn)
    cases = []
    for name, ids, V in id_cases(9):
        U = F.one_hot(ids, V).float()
        cases.append(
            Case(
                name,
                shapes(ids=ids) + f", vocab_size = {V}",
                lambda f, ids=ids, V=V: f(ids, V),
                U,
                atol=0.0,
                mistakes=[
                    (
                        tr(
                            "U must be floating point (float32) so that U @ W_e is a matrix "
                            "product: F.one_hot gives int64, add .float()"
                        ),
                        F.one_hot(ids, V),
                    ),
                    (
                        tr("U is transposed: one row per token, one column per vocabulary entry"),
                        U.transpose(-2, -1),
                    ),
                    (
                        tr("one column short: U has vocab_size columns, ids 0 .. vocab_size - 1"),
                        attempt(lambda i, v: F.one_hot(i, v).float(), ids, V - 1),
                    ),
                    (
                        tr("the 1 is one column to the right: token j's row has its 1 in column j"),
                        F.one_hot(ids + 1, V + 1)[..., :-1].float(),
                    ),
                ],
            )
        )
    return run_cases(
        "one_hot",
        fn,
        cases,
        tr("Replace raise NotImplementedError: return U, (..., n, vocab_size) in float32."),
    )


def check_embed(fn) -> CheckResult:
    """fn(ids, W_e, W_p) must give h_0 = U W_e + W_p for the first n positions."""
    check_function("fn", fn)
    g = seeded(10)
    cases = []
    for name, ids, V in id_cases(11):
        d, n_ctx = 6, 8
        W_e, W_p = randn(g, V, d), randn(g, n_ctx, d)
        n = ids.shape[-1]
        lookup = nn.Embedding.from_pretrained(W_e)(ids)  # torch's own row lookup: U W_e
        cases.append(
            Case(
                name,
                shapes(ids=ids, W_e=W_e, W_p=W_p),
                lambda f, ids=ids, W_e=W_e, W_p=W_p: f(ids, W_e, W_p),
                lookup + W_p[:n],
                mistakes=[
                    (tr("the positions are missing: add W_p[:n]"), lookup),
                    (
                        tr("only the positions: add the token embeddings U W_e"),
                        W_p[:n].expand_as(lookup),
                    ),
                    (
                        tr("every position got W_p[0]: add W_p[:n], one row per position"),
                        lookup + W_p[0],
                    ),
                    (tr("positions shifted by one: position 0 is W_p[0]"), lookup + W_p[1 : n + 1]),
                ],
            )
        )
    return run_cases(
        "embed",
        fn,
        cases,
        tr(
            "Replace raise NotImplementedError: return h_0 = U W_e + W_p for the first n positions."
        ),
    )


# --- 07: LayerNorm and the block ------------------------------------------------------------


def check_layer_norm(fn) -> CheckResult:
    """fn(x, gain, bias, eps=1e-5) must normalise over the last axis, as F.layer_norm does."""
    check_function("fn", fn)
    g = seeded(12)
    cases = []
    for name, shape, eps, dtype in (
        (tr("one vector per token, d = 8"), (5, 8), None, torch.float32),
        (tr("batched, d = 16"), (2, 3, 16), None, torch.float32),
        (tr("eps = 0.1 (not the default)"), (4, 6), 0.1, torch.float32),
        ("float64, eps = 1e-3", (3, 5), 1e-3, torch.float64),
    ):
        x = randn(g, *shape, dtype=dtype, scale=0.5) + 0.3
        d = shape[-1]
        gain = randn(g, d, dtype=dtype) * 0.2 + 1.0
        bias = randn(g, d, dtype=dtype) * 0.1
        used = 1e-5 if eps is None else eps
        mean = x.mean(-1, keepdim=True)
        centred = x - mean
        biased = centred.pow(2).mean(-1, keepdim=True)
        cases.append(
            Case(
                name,
                shapes(x=x) + ("" if eps is None else f", eps = {eps:g}"),
                (lambda f, x=x, gain=gain, bias=bias: f(x, gain, bias))
                if eps is None
                else (lambda f, x=x, gain=gain, bias=bias, eps=eps: f(x, gain, bias, eps=eps)),
                F.layer_norm(x, (d,), gain, bias, used),
                atol=1e-5 if dtype == torch.float32 else 1e-10,
                mistakes=[
                    (
                        tr("eps is outside the square root: divide by sqrt(variance + eps)"),
                        gain * centred / (biased.sqrt() + used) + bias,
                    ),
                    (
                        tr("the variance is the unbiased one (n - 1): LayerNorm divides by n"),
                        gain * centred / torch.sqrt(x.var(-1, keepdim=True) + used) + bias,
                    ),
                    (
                        tr(
                            "normalised over the wrong axis: LayerNorm works on each token's "
                            "vector, the last axis"
                        ),
                        gain * (x - x.mean(0)) / torch.sqrt(x.var(0, unbiased=False) + used) + bias,
                    ),
                    (
                        tr("the eps argument is ignored: use the eps that is passed in"),
                        F.layer_norm(x, (d,), gain, bias, 1e-5),
                    ),
                    (
                        tr("the gain and bias are missing: γ ⊙ x̂ + β"),
                        centred / torch.sqrt(biased + used),
                    ),
                ],
            )
        )
    return run_cases(
        "layer_norm",
        fn,
        cases,
        tr(
            "Replace raise NotImplementedError: normalise over the last axis, then scale and shift."
        ),
    )


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
    # The activation as a function, not the module: torch's fast path would take any nn.GELU
    # for the exact one, and GPT-1's is the tanh approximation.
    reference = nn.TransformerEncoderLayer(
        d_model,
        h,
        dim_feedforward=d_ff,
        dropout=0.0,
        activation=lambda x: ffn[1](x),
        batch_first=True,
        norm_first=False,
    )
    qkv = [W[k] for k in ("W_Q", "W_K", "W_V")]
    n = x.shape[-2]
    causal = torch.zeros(n, n).masked_fill(torch.ones(n, n, dtype=torch.bool).triu(1), -math.inf)
    with torch.no_grad():
        reference.self_attn.in_proj_weight.copy_(torch.cat([layer.weight for layer in qkv]))
        reference.self_attn.in_proj_bias.copy_(torch.cat([bias_of(layer) for layer in qkv]))
        reference.self_attn.out_proj.load_state_dict(W["W_O"].state_dict())
        reference.linear1.load_state_dict(ffn[0].state_dict())
        reference.linear2.load_state_dict(ffn[2].state_dict())
        reference.norm1.load_state_dict(ln_1.state_dict())
        reference.norm2.load_state_dict(ln_2.state_dict())
        reference.eval()
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


# --- 08: the objective, sampling, greedy decoding ---------------------------------------------


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


def check_sample_next_token(fn, draws: int = 4000) -> CheckResult:
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
            hint = sampling_hint(counts / draws, logits, temperature, top_k)
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


def sampling_hint(frequencies, logits, temperature, top_k) -> str | None:
    """Name the likely mistake by the distribution the draws look like."""
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
            F.one_hot(logits.argmax(), len(logits)).float(),
        ),
    ]
    gaps = [(float((frequencies - p).abs().max()), hint) for hint, p in candidates]
    gap, hint = min(gaps)
    return hint if gap < 0.03 else None


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
