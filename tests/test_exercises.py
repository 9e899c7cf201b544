"""Every checker passes the worked solution and rejects the usual mistakes with a hint that
names them. The solutions are the code cells tagged "solution" in solutions/*.ipynb, so the
notebooks a learner reads are the ones tested here."""

from __future__ import annotations

import math
from pathlib import Path

import nbformat
import pytest
import torch
import torch.nn.functional as F
from torch import nn

from nbhelpers import MultiHeadAttention
from nbhelpers.exercises import (
    FAILED,
    NOT_ATTEMPTED,
    PASSED,
    check_accumulated_step,
    check_attention,
    check_attention_entropy,
    check_bpe_encode,
    check_cached_attention_step,
    check_cached_causal_mask,
    check_causal_multi_head,
    check_causality_test,
    check_decode_embedding,
    check_embed,
    check_fine_tuning_step,
    check_gpt1_block,
    check_gpt1_forward,
    check_greedy_generate,
    check_l3,
    check_left_padded_mask,
    check_log_likelihood,
    check_log_softmax,
    check_merge_partials,
    check_merge_step,
    check_multi_head_attention,
    check_parameter_count,
    check_sample_next_token,
    check_score_divisor,
    check_self_attention,
    check_similarity_inputs,
    check_similarity_scores,
    check_softmax_backward,
    check_top_p_filter,
)

SOLUTIONS = Path(__file__).resolve().parent.parent / "solutions"
NEG_INF = float("-inf")


@pytest.fixture(scope="module")
def solved():
    """Every name the solution cells define."""
    names: dict = {}
    for path in sorted(SOLUTIONS.glob("*_solutions.ipynb")):
        notebook = nbformat.read(path, as_version=4)
        for cell in notebook.cells:
            if "solution" in cell.get("metadata", {}).get("tags", []):
                exec(compile(cell.source, f"{path.name}", "exec"), names)
    return names


CHECKERS = {
    check_similarity_scores: "my_similarity_scores",
    check_score_divisor: "my_score_divisor",
    check_log_softmax: "my_log_softmax",
    check_softmax_backward: "my_softmax_backward",
    check_attention: "my_attention",
    check_self_attention: "MySelfAttention",
    check_attention_entropy: "my_attention_entropy",
    check_left_padded_mask: "my_left_padded_mask",
    check_causality_test: "my_causality_test",
    check_multi_head_attention: "MyMultiHeadAttention",
    check_causal_multi_head: "MyCausalMultiHead",
    check_decode_embedding: "my_decode_embedding",
    check_embed: "my_embed",
    check_gpt1_block: "MyGPT1Block",
    check_gpt1_forward: "my_gpt1_forward",
    check_parameter_count: "my_parameter_count",
    check_log_likelihood: "my_log_likelihood",
    check_accumulated_step: "my_accumulated_step",
    check_sample_next_token: "my_sample_next_token",
    check_greedy_generate: "my_greedy_generate",
    check_top_p_filter: "my_top_p_filter",
    check_merge_partials: "my_merge_partials",
    check_cached_causal_mask: "my_cached_causal_mask",
    check_cached_attention_step: "my_cached_attention_step",
    check_merge_step: "my_merge_step",
    check_bpe_encode: "my_bpe_encode",
    check_similarity_inputs: "my_similarity_inputs",
    check_l3: "my_l3",
    check_fine_tuning_step: "my_fine_tuning_step",
}
IDS = [c.__name__ for c in CHECKERS]


@pytest.mark.parametrize(("checker", "name"), CHECKERS.items(), ids=IDS)
def test_the_worked_solution_passes(checker, name, solved):
    result = checker(solved[name])
    assert result.status == PASSED and bool(result), repr(result)
    assert repr(result).startswith("✓")


def skeleton_function(*args, **kwargs):
    raise NotImplementedError


class SkeletonModule(nn.Module):
    def __init__(self, *args):
        super().__init__()
        raise NotImplementedError


@pytest.mark.parametrize(("checker", "name"), CHECKERS.items(), ids=IDS)
def test_the_skeleton_is_not_attempted_in_one_line(checker, name):
    skeleton = SkeletonModule if name[0].isupper() else skeleton_function
    result = checker(skeleton)
    assert result.status == NOT_ATTEMPTED and not bool(result)
    report = repr(result)
    assert len(report.splitlines()) == 1
    assert "not attempted. Replace raise NotImplementedError" in report
    # It states the task, never the answer: no formula, no function that solves it.
    task = report.split("NotImplementedError:", 1)[1]
    given_away = [s for s in GIVE_AWAYS if s in task]
    assert not given_away, f"the not-attempted message gives {given_away} away: {report}"


# What a formula or a solution looks like in a sentence.
GIVE_AWAYS = ("=", "√", "Σ", "⊙", "ᵀ", " / ", " - ", " + ", "softmax(", "logsumexp", "exp(", "@")


@pytest.mark.parametrize(("checker", "name"), CHECKERS.items(), ids=IDS)
def test_an_answer_that_raises_fails_without_raising(checker, name):
    def broken(*args, **kwargs):
        raise IndexError("index 7 is out of bounds\nsecond line of the trace")

    class Broken(nn.Module):
        def __init__(self, *args):
            super().__init__()
            raise IndexError("index 7 is out of bounds\nsecond line of the trace")

    result = checker(Broken if name[0].isupper() else broken)
    assert result.status == FAILED
    report = repr(result)
    assert "case 1 of" in report and "IndexError: index 7 is out of bounds" in report
    assert "second line" not in report


@pytest.mark.parametrize(("checker", "name"), CHECKERS.items(), ids=IDS)
def test_misusing_the_checker_is_a_type_error_naming_the_argument(checker, name):
    is_class = name[0].isupper()
    with pytest.raises(TypeError, match="must be a class" if is_class else "must be a function"):
        checker(skeleton_function if is_class else SkeletonModule)
    with pytest.raises(TypeError, match="cls" if is_class else "fn"):
        checker(42)


def rejects(checker, answer, hint: str):
    result = checker(answer)
    report = repr(result)
    assert result.status == FAILED and not bool(result), report
    assert "hint:" in report and hint in report, report
    return report


# --- the usual mistakes, exercise by exercise -------------------------------------------------


def stable_softmax(s):
    m = s.amax(-1, keepdim=True)
    m = torch.where(torch.isneginf(m), torch.zeros_like(m), m)
    e = torch.exp(s - m)
    total = e.sum(-1, keepdim=True)
    return e / torch.where(total > 0, total, torch.ones_like(total))


def scores_of(Q, K):
    return Q @ K.transpose(-2, -1)


@pytest.mark.parametrize(
    ("answer", "hint"),
    [
        (lambda Q, K: scores_of(Q, K), "not divided by √d_k"),
        (lambda Q, K: scores_of(Q, K) / Q.shape[-1], "divided by d_k, not √d_k"),
        (lambda Q, K: scores_of(Q, K) / math.sqrt(K.shape[-2]), "√m (the number of keys)"),
        (lambda Q, K: K @ Q.transpose(-2, -1) / math.sqrt(Q.shape[-1]), "this is K Qᵀ"),
        (lambda Q, K: scores_of(Q, K) / math.sqrt(Q.shape[-2]), "√n (the number of queries)"),
    ],
)
def test_similarity_scores_mistakes(answer, hint):
    report = rejects(check_similarity_scores, answer, hint)
    if "K Qᵀ" in hint:
        assert "expected" in report  # the shapes differ unless n = m


def attention_with(softmax_dim=-1, scale=True, mask_mode="add"):
    def answer(Q, K, V, mask=None):
        scores = scores_of(Q, K) / (math.sqrt(Q.shape[-1]) if scale else 1.0)
        if mask is not None and mask_mode == "add":
            scores = scores + mask
        weights = F.softmax(scores, dim=softmax_dim)
        if mask is not None and mask_mode == "after":
            weights = weights * (mask == 0)
        return weights @ V, weights

    return answer


@pytest.mark.parametrize(
    ("answer", "hint"),
    [
        (attention_with(scale=False), "not divided by √d_k"),
        (attention_with(softmax_dim=-2), "softmax over the wrong axis"),
        (attention_with(mask_mode="ignore"), "the mask is ignored"),
        (attention_with(mask_mode="after"), "applied after softmax"),
    ],
)
def test_attention_mistakes(answer, hint):
    rejects(check_attention, answer, hint)


def self_attention_class(scale_by="d_k", project_values=True, dim=-1):
    class Answer(nn.Module):
        def __init__(self, d_model, d_k):
            super().__init__()
            self.d_model = d_model
            self.W_Q, self.W_K, self.W_V = (nn.Linear(d_model, d_k) for _ in range(3))

        def forward(self, X):
            Q, K = self.W_Q(X), self.W_K(X)
            V = self.W_V(X) if project_values else X
            scale = {"d_k": Q.shape[-1], "d_model": self.d_model, "none": 1}[scale_by]
            return F.softmax(scores_of(Q, K) / math.sqrt(scale), dim=dim) @ V

    return Answer


@pytest.mark.parametrize(
    ("answer", "hint"),
    [
        (self_attention_class(scale_by="d_model"), "divided by √d_model = √8, not √d_k = √4"),
        (self_attention_class(scale_by="none"), "not divided by √d_k"),
        (self_attention_class(project_values=False), "the values are X itself"),
        (self_attention_class(dim=-2), "softmax over the wrong axis"),
    ],
)
def test_self_attention_mistakes(answer, hint):
    rejects(check_self_attention, answer, hint)


def test_a_module_without_the_named_layers_is_told_which_one_is_missing():
    class NoValues(nn.Module):
        def __init__(self, d_model, d_k):
            super().__init__()
            self.W_Q, self.W_K = nn.Linear(d_model, d_k), nn.Linear(d_model, d_k)

        def forward(self, X):
            return X

    report = repr(check_self_attention(NoValues))
    assert "needs an attribute W_V that is an nn.Linear" in report


def multi_head_class(scale_by="d_head", use_output=True, transpose=True, split=True):
    class Answer(nn.Module):
        def __init__(self, d_model, n_heads):
            super().__init__()
            self.h = n_heads
            self.W_Q, self.W_K, self.W_V, self.W_O = (nn.Linear(d_model, d_model) for _ in range(4))

        def forward(self, x):
            *batch, n, d = x.shape
            h = self.h if split else 1
            d_head = d // h

            def heads(t):
                if transpose:
                    return t.view(*batch, n, h, d_head).transpose(-3, -2)
                return t.reshape(*batch, h, n, d_head)

            q, k, v = (heads(W(x)) for W in (self.W_Q, self.W_K, self.W_V))
            scale = d_head if scale_by == "d_head" else d
            out = F.softmax(scores_of(q, k) / math.sqrt(scale), -1) @ v
            out = out.transpose(-3, -2).reshape(*batch, n, d)
            return self.W_O(out) if use_output else out

    return Answer


@pytest.mark.parametrize(
    ("answer", "hint"),
    [
        (multi_head_class(scale_by="d_model"), "divided by √d_model = √8, not √d_head = √4"),
        (multi_head_class(use_output=False), "W_O is missing"),
        (multi_head_class(transpose=False), "split without the transpose"),
        (multi_head_class(split=False), "one head over all of d_model"),
    ],
)
def test_multi_head_attention_mistakes(answer, hint):
    rejects(check_multi_head_attention, answer, hint)


def lookup(ids, W_e):
    return W_e[ids]


@pytest.mark.parametrize(
    ("answer", "hint"),
    [
        (lambda ids, W_e, W_p, start=0: lookup(ids, W_e), "the positions are missing"),
        (
            lambda ids, W_e, W_p, start=0: W_p[start : start + ids.shape[-1]].expand(
                *ids.shape, -1
            ),
            "only the positions",
        ),
        (lambda ids, W_e, W_p, start=0: lookup(ids, W_e) + W_p[start], "the same row of W_p"),
        (
            lambda ids, W_e, W_p, start=0: lookup(ids, W_e) + W_p[: ids.shape[-1]],
            "start is ignored",
        ),
        (
            lambda ids, W_e, W_p, start=0: lookup(ids, W_e) + W_p[1 : ids.shape[-1] + 1],
            "shifted by one",
        ),
        (lambda ids, W_e, W_p, start=0: lookup(ids, W_e) + W_p, "the answer raised RuntimeError"),
        (
            lambda ids, W_e, W_p: lookup(ids, W_e) + W_p[: ids.shape[-1]],
            "the answer raised TypeError",
        ),
    ],
)
def test_embed_mistakes(answer, hint):
    result = check_embed(answer)
    assert result.status == FAILED and hint in repr(result), repr(result)


def block_class(order="post", mask=True, first_residual=True, second_residual=True):
    class Answer(nn.Module):
        def __init__(self, d_model, n_heads, d_ff):
            super().__init__()
            self.attn = MultiHeadAttention(d_model, n_heads, causal=mask)
            self.ln_1, self.ln_2 = nn.LayerNorm(d_model), nn.LayerNorm(d_model)
            self.ffn = nn.Sequential(nn.Linear(d_model, d_ff), nn.GELU(), nn.Linear(d_ff, d_model))

        def forward(self, h):
            if order == "pre":
                h = h + self.attn(self.ln_1(h))
                return h + self.ffn(self.ln_2(h))
            if order == "swapped":
                g = self.ln_1(h + self.ffn(h))
                return self.ln_2(g + self.attn(g))
            g = self.ln_1((h if first_residual else 0) + self.attn(h))
            return self.ln_2((g if second_residual else 0) + self.ffn(g))

    return Answer


@pytest.mark.parametrize(
    ("answer", "hint"),
    [
        (block_class(mask=False), "no causal mask"),
        (block_class(order="pre"), "this is pre-LN"),
        (block_class(first_residual=False), "the first residual connection is missing"),
        (block_class(second_residual=False), "the second residual connection is missing"),
        (block_class(order="swapped"), "the feed-forward layer runs first"),
    ],
)
def test_gpt1_block_mistakes(answer, hint):
    rejects(check_gpt1_block, answer, hint)


def test_gpt1_block_without_a_sequential_ffn_is_told_what_to_build():
    class Answer(block_class()):
        def __init__(self, d_model, n_heads, d_ff):
            super().__init__(d_model, n_heads, d_ff)
            self.ffn = nn.Linear(d_model, d_model)

    assert "ffn = nn.Sequential(nn.Linear, nn.GELU, nn.Linear)" in repr(check_gpt1_block(Answer))


def log_probs_at(logits, ids):
    return F.log_softmax(logits, -1).gather(-1, ids.unsqueeze(-1)).squeeze(-1)


@pytest.mark.parametrize(
    ("answer", "hint"),
    [
        (lambda lg, ids: log_probs_at(lg[..., :-1, :], ids[..., 1:]).mean(-1), "a mean"),
        (lambda lg, ids: -log_probs_at(lg[..., :-1, :], ids[..., 1:]).sum(-1), "this is the loss"),
        (lambda lg, ids: log_probs_at(lg, ids).sum(-1), "off by one"),
        (lambda lg, ids: log_probs_at(lg, ids)[..., 1:].sum(-1), "the last position predicts"),
        (lambda lg, ids: F.softmax(lg[..., :-1, :], -1).gather(-1, ids[..., 1:, None])
         .squeeze(-1).sum(-1), "probabilities, not log-probabilities"),
    ],
)  # fmt: skip
def test_log_likelihood_mistakes(answer, hint):
    rejects(check_log_likelihood, answer, hint)


def sampler(temperature_mode="divide", use_top_k=True, greedy=False):
    def answer(logits, temperature, top_k, generator):
        if greedy:
            return int(logits.argmax())
        scaled = {
            "divide": logits / temperature,
            "multiply": logits * temperature,
            "ignore": logits,
        }[temperature_mode]
        if use_top_k and top_k is not None:
            scaled = scaled.masked_fill(scaled < scaled.topk(top_k).values[-1], NEG_INF)
        return int(torch.multinomial(F.softmax(scaled, -1), 1, generator=generator))

    return answer


@pytest.mark.parametrize(
    ("answer", "hint"),
    [
        (sampler(temperature_mode="multiply"), "the temperature multiplies the logits"),
        (sampler(use_top_k=False), "top_k is ignored"),
        (sampler(temperature_mode="ignore"), "the temperature is ignored"),
        (sampler(greedy=True), "greedy decoding"),
    ],
)
def test_sample_next_token_mistakes(answer, hint):
    rejects(check_sample_next_token, answer, hint)


def test_a_sampler_that_returns_an_impossible_id_is_named():
    report = repr(check_sample_next_token(lambda logits, T, k, g: len(logits)))
    assert "returned 8, not a token id in [0, 8)" in report


def greedy(model, ids, steps, eos, keep_prompt=True, stop=True, keep_eos=True, extra=0):
    prompt_length = len(ids)
    with torch.no_grad():
        for _ in range(steps + extra):
            nxt = model(ids)[-1].argmax().view(1)
            if stop and eos is not None and int(nxt) == eos and not keep_eos:
                break
            ids = torch.cat([ids, nxt])
            if stop and eos is not None and int(nxt) == eos:
                break
    return ids if keep_prompt else ids[prompt_length:]


@pytest.mark.parametrize(
    ("answer", "hint"),
    [
        (lambda m, ids, s, e: greedy(m, ids, s, e, keep_prompt=False), "only the new tokens"),
        (lambda m, ids, s, e: greedy(m, ids, s, e, stop=False), "did not stop after eos_id"),
        (lambda m, ids, s, e: greedy(m, ids, s, e, keep_eos=False), "eos_id itself must be kept"),
        (lambda m, ids, s, e: greedy(m, ids, s - 1, e), "one token too few"),
    ],
)
def test_greedy_generate_mistakes(answer, hint):
    rejects(check_greedy_generate, answer, hint)


def step(q, k, v, cache_k, cache_v, order="after", extend=True, attend_new=True, scale=True):
    keys = torch.cat([cache_k, k] if order == "after" else [k, cache_k], -2)
    values = torch.cat([cache_v, v] if order == "after" else [v, cache_v], -2)
    seen_k, seen_v = (keys, values) if attend_new else (cache_k, cache_v)
    factor = math.sqrt(q.shape[-1]) if scale else 1.0
    out = F.softmax(q @ seen_k.transpose(-2, -1) / factor, -1) @ seen_v
    return (out, keys, values) if extend else (out, cache_k, cache_v)


@pytest.mark.parametrize(
    ("answer", "hint"),
    [
        (lambda *a: step(*a, attend_new=False), "the new key is not attended to"),
        (lambda *a: step(*a, order="before"), "at the end of the cache"),
        (lambda *a: step(*a, extend=False), "the cache was not extended"),
        (lambda *a: step(*a, scale=False), "not divided by √d"),
    ],
)
def test_cached_attention_step_mistakes(answer, hint):
    rejects(check_cached_attention_step, answer, hint)


def test_reports_are_stable_from_run_to_run():
    wrong = attention_with(scale=False)
    assert repr(check_attention(wrong)) == repr(check_attention(wrong))
    assert repr(check_sample_next_token(sampler(use_top_k=False))) == repr(
        check_sample_next_token(sampler(use_top_k=False))
    )


# --- the new exercises: reasoning and assembling ----------------------------------------------


@pytest.mark.parametrize(
    ("answer", "hint"),
    [
        (lambda d, sq, sk: math.sqrt(d), "only √d_k"),
        (lambda d, sq, sk: d * sq**2 * sk**2, "a variance, not a standard deviation"),
        (lambda d, sq, sk: math.sqrt(d) * sq**2 * sk**2, "σ² where σ belongs"),
        (lambda d, sq, sk: d * sq * sk, "d_k where √d_k belongs"),
        (lambda d, sq, sk: math.sqrt(d) * (sq + sk), "the variances multiply"),
    ],
)
def test_score_divisor_mistakes(answer, hint):
    rejects(check_score_divisor, answer, hint)


def test_score_divisor_agrees_with_sampled_scores(solved):
    # The checker's formula, confirmed by simulation: q·k over 200,000 sampled pairs.
    g = torch.Generator().manual_seed(0)
    d_k, s_q, s_k = 8, 0.5, 3.0
    q = torch.randn(200_000, d_k, generator=g, dtype=torch.float64) * s_q
    k = torch.randn(200_000, d_k, generator=g, dtype=torch.float64) * s_k
    scaled = (q * k).sum(-1) / solved["my_score_divisor"](d_k, s_q, s_k)
    assert abs(float(scaled.std()) - 1.0) < 0.01


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
):
    positions = torch.arange(n)
    L = torch.tensor(lengths)[:, None]
    real = positions[None, :] >= n - L if side == "left" else positions[None, :] < L
    allowed = torch.ones(len(lengths), n, n, dtype=torch.bool)
    if causal:
        allowed &= positions[None, :] <= positions[:, None]
    if padding:
        allowed &= real[:, None, :] if on == "keys" else real[:, :, None]
    if patch_empty:
        allowed |= ~allowed.any(-1, keepdim=True) & torch.eye(n, dtype=torch.bool)
    return torch.zeros(allowed.shape).masked_fill(~allowed, fill)


@pytest.mark.parametrize(
    ("answer", "hint"),
    [
        (lambda lengths, n: left_padded(lengths, n, side="right"), "this is right padding"),
        (lambda lengths, n: left_padded(lengths, n, on="queries"), "masked on the queries"),
        (lambda lengths, n: left_padded(lengths, n, causal=False), "the causal part is missing"),
        (lambda lengths, n: left_padded(lengths, n, padding=False), "the padding part is missing"),
        (lambda lengths, n: left_padded(lengths, n, patch_empty=True), "must stay all -inf"),
        (lambda lengths, n: left_padded(lengths, n, fill=-1e9), "is not -inf"),
        (lambda lengths, n: torch.isfinite(left_padded(lengths, n)), "a boolean mask"),
    ],
)
def test_left_padded_mask_mistakes(answer, hint):
    rejects(check_left_padded_mask, answer, hint)


def causality_test(positions="all", atol=1e-6, compare="before"):
    def is_causal(layer, n, d_model):
        x = torch.randn(n, d_model)
        with torch.no_grad():
            before = layer(x)
            for k in range(1, n) if positions == "all" else [1]:
                changed = x.clone()
                changed[k] += 1.0
                after = layer(changed)
                rows = slice(0, k) if compare == "before" else slice(0, n)
                if not torch.allclose(after[rows], before[rows], rtol=0, atol=atol):
                    return False
        return True

    return is_causal


@pytest.mark.parametrize(
    ("answer", "hint"),
    [
        (lambda layer, n, d: True, "calls attention without a mask causal"),
        (lambda layer, n, d: False, "calls a causal layer non-causal"),
        (causality_test(positions="one"), "calls a leaking layer causal"),
        (causality_test(atol=1e-2), "calls a leaking layer causal"),
        (causality_test(compare="all"), "calls a causal layer non-causal"),
    ],
)
def test_causality_test_mistakes(answer, hint):
    rejects(check_causality_test, answer, hint)


def fused_class(mask=True, average=False, layout="qkv", scale_by="d_head", use_output=True):
    class Fused(nn.Module):
        def __init__(self, d_model, n_heads):
            super().__init__()
            self.h = n_heads
            self.W_QKV = nn.Linear(d_model, 3 * d_model)
            self.W_O = nn.Linear(d_model, d_model)

        def forward(self, x):
            *batch, n, d = x.shape
            d_head = d // self.h
            qkv = self.W_QKV(x)
            if layout == "qkv":
                q, k, v = (
                    t.unflatten(-1, (self.h, d_head)).transpose(-3, -2) for t in qkv.split(d, -1)
                )
            else:
                q, k, v = (
                    qkv.unflatten(-1, (self.h, 3 * d_head)).transpose(-3, -2).split(d_head, -1)
                )
            scores = q @ k.mT / math.sqrt(d_head if scale_by == "d_head" else d)
            if mask:
                scores = scores.masked_fill(torch.ones(n, n, dtype=torch.bool).triu(1), NEG_INF)
            weights = F.softmax(scores, -1)
            out = (weights @ v).transpose(-3, -2).flatten(-2)
            return (self.W_O(out) if use_output else out), (
                weights.mean(-3) if average else weights
            )

    return Fused


@pytest.mark.parametrize(
    ("answer", "hint"),
    [
        (fused_class(mask=False), "no causal mask"),
        (fused_class(average=True), "averaged over the heads"),
        (fused_class(layout="per_head"), "the fused output is [Q | K | V]"),
        (fused_class(scale_by="d_model"), "√d_model"),
        (fused_class(use_output=False), "W_O is missing"),
    ],
)
def test_causal_multi_head_mistakes(answer, hint):
    rejects(check_causal_multi_head, answer, hint)


def gpt1_forward(positions=True, blocks="all", output="logits", last_only=False):
    def forward(model, ids):
        n = ids.shape[-1]
        h = model.W_e.weight[ids] + (model.W_p[:n] if positions else 0)
        chosen = {"all": list(model.blocks), "none": [], "last": [model.blocks[-1]]}[blocks]
        for block in chosen:
            h = block(h)
        logits = h @ model.W_e.weight.T
        logits = logits[..., -1, :] if last_only else logits
        return {"logits": logits, "probs": logits.softmax(-1)}[output]

    return forward


@pytest.mark.parametrize(
    ("answer", "hint"),
    [
        (gpt1_forward(positions=False), "W_p is missing"),
        (gpt1_forward(blocks="none"), "the blocks are skipped"),
        (gpt1_forward(blocks="last"), "only the last block"),
        (gpt1_forward(output="probs"), "probabilities, not logits"),
        (gpt1_forward(last_only=True), "only the last position"),
    ],
)
def test_gpt1_forward_mistakes(answer, hint):
    rejects(check_gpt1_forward, answer, hint)


def accumulated(shift=True, ignore=True, weighting="tokens", zero="once", step="once", split=True):
    def one_step(model, optimizer, ids, pad_id, micro_batch):
        chunks = ids.split(micro_batch) if split else [ids]
        pairs = [(chunk[:, :-1], chunk[:, 1:]) if shift else (chunk, chunk) for chunk in chunks]
        total = sum(int((t != pad_id).sum()) if ignore else t.numel() for _, t in pairs)
        if zero == "once":
            optimizer.zero_grad()
        reported = 0.0
        for inputs, targets in pairs:
            if zero == "each":
                optimizer.zero_grad()
            summed = F.cross_entropy(
                model(inputs).flatten(0, 1),
                targets.flatten(),
                ignore_index=pad_id if ignore else -100,
                reduction="sum",
            )
            count = int((targets != pad_id).sum())
            loss = {
                "tokens": summed / total,
                "means": summed / count / len(pairs),
                "sum": summed,
            }[weighting]
            loss.backward()
            reported += loss.item()
            if step == "each":
                optimizer.step()
        if step == "once":
            optimizer.step()
        return reported

    return one_step


@pytest.mark.parametrize(
    ("answer", "hint"),
    [
        (accumulated(weighting="means"), "the mean of the micro-batches' means"),
        (accumulated(shift=False), "the targets are not shifted"),
        (accumulated(ignore=False), "the <PAD> targets count"),
        (accumulated(weighting="sum"), "the loss is a sum"),
        (accumulated(zero="none"), "the old gradients were not cleared"),
        (accumulated(zero="each"), "zero_grad inside the loop"),
        (accumulated(step="each"), "a step per micro-batch"),
        (accumulated(step="none"), "the weights did not move"),
        (accumulated(split=False), "ids.split(micro_batch)"),
    ],
)
def test_accumulated_step_mistakes(answer, hint):
    rejects(check_accumulated_step, answer, hint)


def test_the_checkers_plain_sgd_is_torchs_sgd():
    from nbhelpers.exercises.references import PlainSGD

    torch.manual_seed(0)
    ours, theirs = nn.Linear(4, 3), nn.Linear(4, 3)
    theirs.load_state_dict(ours.state_dict())
    x = torch.randn(5, 4)
    for model, optimizer in (
        (ours, PlainSGD(ours.parameters(), lr=0.5)),
        (theirs, torch.optim.SGD(theirs.parameters(), lr=0.5)),
    ):
        for _ in range(2):
            optimizer.zero_grad()
            model(x).pow(2).sum().backward()
            optimizer.step()
    for a, b in zip(ours.parameters(), theirs.parameters(), strict=True):
        assert torch.equal(a, b)


@pytest.mark.parametrize(("checker", "name"), CHECKERS.items(), ids=IDS)
def test_a_checker_leaves_the_learners_state_alone(checker, name, solved):
    torch.manual_seed(123)
    expected_draw = torch.rand(3)
    torch.manual_seed(123)
    dtype, threads, grad = (
        torch.get_default_dtype(),
        torch.get_num_threads(),
        torch.is_grad_enabled(),
    )
    checker(solved[name])
    assert torch.equal(torch.rand(3), expected_draw), "the checker moved the learner's random state"
    assert torch.get_default_dtype() == dtype
    assert torch.get_num_threads() == threads
    assert torch.is_grad_enabled() == grad


def log_softmax(s, stable=True, via_softmax=False, dim=-1):
    if via_softmax:
        return torch.log(F.softmax(s, dim=dim))
    m = s.amax(dim, keepdim=True) if stable else torch.zeros_like(s.amax(dim, keepdim=True))
    return s - m - torch.log(torch.exp(s - m).sum(dim, keepdim=True))


@pytest.mark.parametrize(
    ("answer", "hint"),
    [
        (lambda s: log_softmax(s, via_softmax=True), "log of softmax underflows"),
        (lambda s: log_softmax(s, stable=False), "exp overflows without the maximum"),
        (lambda s: log_softmax(s, dim=0), "over the wrong axis"),
        (lambda s: F.softmax(s, dim=-1), "the softmax itself"),
    ],
)
def test_log_softmax_mistakes(answer, hint):
    rejects(check_log_softmax, answer, hint)


@pytest.mark.parametrize(
    ("answer", "hint"),
    [
        (lambda a, g: a * g, "a ⊙ g alone"),
        (lambda a, g: g - (a * g).sum(-1, keepdim=True), "without the factor a"),
        (lambda a, g: a * ((a * g).sum(-1, keepdim=True) - g), "the sign is reversed"),
        (lambda a, g: a * (g - (a * g).sum(0, keepdim=True)), "runs over the wrong axis"),
    ],
)
def test_softmax_backward_mistakes(answer, hint):
    rejects(check_softmax_backward, answer, hint)


@pytest.mark.parametrize(
    ("answer", "hint"),
    [
        (lambda a: -(a * torch.log(a)).sum(-1), "0 log 0 gave NaN"),
        (lambda a: (a * torch.log(a)).nan_to_num(0.0).sum(-1), "the sign"),
        (lambda a: -(a * torch.log2(a)).nan_to_num(0.0).sum(-1), "log base 2"),
        (lambda a: -(a * torch.log(a)).nan_to_num(0.0).sum(-2), "summed over the wrong axis"),
    ],
)
def test_attention_entropy_mistakes(answer, hint):
    rejects(check_attention_entropy, answer, hint)


@pytest.mark.parametrize(
    ("answer", "hint"),
    [
        (lambda h0, W_e, W_p: torch.cdist(h0, W_e).argmin(-1), "the positions were not taken away"),
        (
            lambda h0, W_e, W_p: ((h0 - W_p[: h0.shape[-2]]) @ W_e.T).argmax(-1),
            "the largest dot product is not the nearest row",
        ),
        (lambda h0, W_e, W_p: (h0 @ W_e.T).argmax(-1), "two steps are missing"),
        (
            lambda h0, W_e, W_p: torch.cdist(
                h0 - W_p[: h0.shape[-2]], W_e.expand(*h0.shape[:-2], -1, -1)
            ).argmin(-2),
            "along the wrong axis",
        ),
    ],
)
def test_decode_embedding_mistakes(answer, hint):
    rejects(check_decode_embedding, answer, hint)


def parameters(V, n_ctx, d, L, d_ff, tied=True, positions=True, biases=True, norms=True, ffn=None):
    d_ff = ffn if ffn is not None else d_ff
    attention = 4 * (d * d + (d if biases else 0))
    feed_forward = 2 * d * d_ff + ((d_ff + d) if biases else 0)
    block = attention + feed_forward + (4 * d if norms else 0)
    return V * d * (1 if tied else 2) + (n_ctx * d if positions else 0) + L * block


@pytest.mark.parametrize(
    ("answer", "hint"),
    [
        (lambda *a: parameters(*a, tied=False), "W_e counted twice"),
        (lambda *a: parameters(*a, positions=False), "W_p is missing"),
        (lambda *a: parameters(*a, biases=False), "the biases are missing"),
        (lambda *a: parameters(*a, norms=False), "the LayerNorms are missing"),
        (lambda V, n, d, L, f: parameters(V, n, d, L, f, ffn=4 * d), "d_ff is given"),
    ],
)
def test_parameter_count_mistakes(answer, hint):
    rejects(check_parameter_count, answer, hint)


def nucleus(probs, p, crossing=True, renormalise=True, descending=True):
    values, order = probs.sort(descending=descending)
    keep_sorted = (values.cumsum(0) - values < p) if crossing else (values.cumsum(0) <= p)
    keep = torch.zeros_like(probs, dtype=torch.bool)
    keep[order] = keep_sorted
    kept = probs * keep
    return kept / kept.sum() if renormalise else kept


@pytest.mark.parametrize(
    ("answer", "hint"),
    [
        (lambda probs, p: nucleus(probs, p, crossing=False), "the token that crosses p"),
        (lambda probs, p: nucleus(probs, p, renormalise=False), "not renormalised"),
        (lambda probs, p: nucleus(probs, p, descending=False), "the least likely tokens"),
        (lambda probs, p: probs * (probs >= p) / (probs * (probs >= p)).sum(), "compared with p"),
        (
            lambda probs, p: (
                probs
                * (probs.cumsum(0) - probs < p)
                / (probs * (probs.cumsum(0) - probs < p)).sum()
            ),
            "in the vocabulary's order",
        ),
    ],
)
def test_top_p_filter_mistakes(answer, hint):
    rejects(check_top_p_filter, answer, hint)


def merge(m1, l1, acc1, m2, l2, acc2, mode="right"):
    m = torch.maximum(m1, m2)
    if mode == "none":
        return m, l1 + l2, acc1 + acc2
    if mode == "inverted":
        f1, f2 = torch.exp(m - m1), torch.exp(m - m2)
    else:
        f1, f2 = torch.exp(m1 - m), torch.exp(m2 - m)
    if mode == "l_only":
        return m, l1 * f1 + l2 * f2, acc1 + acc2
    return m, l1 * f1 + l2 * f2, acc1 * f1 + acc2 * f2


@pytest.mark.parametrize(
    ("answer", "hint"),
    [
        (lambda *a: merge(*a, mode="none"), "added without rescaling"),
        (lambda *a: merge(*a, mode="inverted"), "rescaled by e^(m - m_i)"),
        (lambda *a: merge(*a, mode="l_only"), "only l was rescaled"),
        (lambda *a: merge(*a, mode="naive"), "an empty block made NaN"),
    ],
)
def test_merge_partials_mistakes(answer, hint):
    rejects(check_merge_partials, answer, hint)


def lower_right(n, m, offset=True, cache_visible=True, own_key=True):
    shift = (m - n) if offset else 0
    blocked = torch.ones(n, m, dtype=torch.bool).triu(shift + (1 if own_key else 0))
    if not cache_visible:
        blocked |= torch.arange(m) < m - n
    return torch.zeros(n, m).masked_fill(blocked, NEG_INF)


@pytest.mark.parametrize(
    ("answer", "hint"),
    [
        (lambda n, m: lower_right(n, m, offset=False), "the offset is missing"),
        (lambda n, m: lower_right(n, m, cache_visible=False), "the cached keys are hidden"),
        (lambda n, m: lower_right(n, m, own_key=False), "off by one"),
        (lambda n, m: torch.isfinite(lower_right(n, m)), "a boolean mask"),
    ],
)
def test_cached_causal_mask_mistakes(answer, hint):
    rejects(check_cached_causal_mask, answer, hint)


def test_the_cached_masks_reference_is_torchs_lower_right_bias():
    from torch.nn.attention.bias import causal_lower_right

    for n, m in ((1, 5), (3, 5), (4, 4), (2, 7)):
        assert torch.equal(
            causal_lower_right(n, m)._materialize(),
            torch.ones(n, m, dtype=torch.bool).tril(diagonal=m - n),
        )


def test_the_parameter_count_matches_gpt1_itself(solved):
    from nbhelpers import GPT1, GPT1Config

    config = GPT1Config(vocab_size=41, n_ctx=32, d_model=64, n_layers=2, n_heads=4)
    model = GPT1(config)
    expected = sum(p.numel() for p in model.parameters())  # W_e is one tensor: tied
    assert solved["my_parameter_count"](41, 32, 64, 2, 256) == expected


def test_a_wrong_matrix_is_drawn_under_the_report(solved):
    """A front end shows only a bundle's richest type: the HTML carries the report as text
    and the picture under it, so neither is lost (text/plain is the same report)."""
    from html.parser import HTMLParser

    wrong = check_left_padded_mask(lambda lengths, n: left_padded(lengths, n, side="right"))
    bundle = wrong._repr_mimebundle_()
    assert set(bundle) == {"text/plain", "text/html"}
    assert bundle["text/plain"] == repr(wrong)

    class Page(HTMLParser):
        text, images = "", []

        def handle_data(self, data):
            self.text += data

        def handle_starttag(self, tag, attrs):
            if tag == "img":
                self.images.append(dict(attrs))

    page = Page()
    page.feed(bundle["text/html"])
    assert page.text == repr(wrong)  # the words, as text, escaped and unescaped again
    assert "hint:" in page.text
    (image,) = page.images
    assert image["src"].startswith("data:image/png;base64,iVBOR")  # the PNG signature
    assert bundle["text/html"].index("<pre") < bundle["text/html"].index("<img")  # under it
    expected, got = wrong.picture
    assert expected.shape == got.shape == (2, 5, 5)
    right = check_left_padded_mask(solved["my_left_padded_mask"])
    assert "<img" not in right._repr_mimebundle_()["text/html"]
    a_number = check_score_divisor(lambda d, sq, sk: math.sqrt(d))
    assert a_number.status == FAILED and "<img" not in a_number._repr_mimebundle_()["text/html"]


def test_a_report_with_markup_in_it_is_shown_as_text():
    result = check_score_divisor(lambda d, sq, sk: "<b>not a number</b>")
    html = result._repr_mimebundle_()["text/html"]
    assert "<b>" not in html and "&lt;b&gt;" in html


# --- the capstone: the learner's parts, assembled and trained -------------------------------


def test_use_parts_keeps_a_part_that_passes_and_replaces_one_that_does_not(solved):
    from nbhelpers.exercises import use_parts
    from nbhelpers.exercises.training import accumulated_step

    parts = use_parts(attention=solved["MyCausalMultiHead"], step=skeleton_function)
    assert parts.attention is solved["MyCausalMultiHead"]
    assert parts.step is accumulated_step  # not attempted: nbhelpers' own
    assert parts.yours == ["attention"]
    assert "not passed its checker yet" in repr(parts)


def test_the_capstone_without_any_part_of_yours_is_not_attempted():
    from nbhelpers.exercises import train_your_gpt1, use_parts

    result = train_your_gpt1(use_parts())
    assert result.status == NOT_ATTEMPTED and not result


@pytest.mark.slow
def test_the_worked_parts_reach_the_goal(solved):
    from nbhelpers.exercises import train_your_gpt1, use_parts

    parts = use_parts(
        attention=solved["MyCausalMultiHead"],
        forward=solved["my_gpt1_forward"],
        step=solved["my_accumulated_step"],
    )
    result = train_your_gpt1(parts, seconds=float("inf"))  # the verdict, not the time
    assert result and result.kl <= 0.05, result


@pytest.mark.slow
def test_the_capstone_names_a_model_that_sees_the_future_or_reads_its_targets(solved):
    from nbhelpers.exercises import train_your_gpt1, use_parts

    def unshifted(model, optimizer, ids, pad_id, micro_batch):
        optimizer.zero_grad()
        loss = F.cross_entropy(model(ids).flatten(0, 1), ids.flatten(), ignore_index=pad_id)
        loss.backward()
        optimizer.step()
        return loss.item()

    result = train_your_gpt1(
        use_parts(step=unshifted, checked=False), steps=200, seconds=float("inf")
    )
    assert result.fault == "targets not shifted", result
    no_mask = fused_class(mask=False)
    result = train_your_gpt1(
        use_parts(attention=no_mask, checked=False), steps=200, seconds=float("inf")
    )
    assert result.fault == "sees the future", result


# --- every correct answer passes, however it is written -------------------------------------


def attention_renormalised(Q, K, V, mask=None):
    """Softmax without the mask, then zero the blocked weights and renormalise."""
    weights = F.softmax(scores_of(Q, K) / math.sqrt(Q.shape[-1]), dim=-1)
    if mask is not None:
        weights = weights * torch.isfinite(mask)
        weights = weights / weights.sum(-1, keepdim=True)
    return weights @ V, weights


def attention_in_log_space(Q, K, V, mask=None):
    scores = torch.einsum("...id,...jd->...ij", Q, K) / math.sqrt(Q.shape[-1])
    weights = torch.exp(F.log_softmax(scores + (0 if mask is None else mask), dim=-1))
    return torch.einsum("...ij,...jd->...id", weights, V), weights


def attention_with_sdpa(Q, K, V, mask=None):
    scores = Q @ K.transpose(-2, -1) / math.sqrt(Q.shape[-1]) + (0 if mask is None else mask)
    return F.scaled_dot_product_attention(Q, K, V, attn_mask=mask), scores.softmax(-1)


class FusedWithSdpa(nn.Module):
    def __init__(self, d_model, n_heads):
        super().__init__()
        self.h = n_heads
        self.W_QKV = nn.Linear(d_model, 3 * d_model)
        self.W_O = nn.Linear(d_model, d_model)

    def forward(self, x):
        d = x.shape[-1]
        q, k, v = (
            t.unflatten(-1, (self.h, d // self.h)).transpose(-3, -2)
            for t in self.W_QKV(x).split(d, -1)
        )
        out = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        n = x.shape[-2]
        causal = torch.ones(n, n, dtype=torch.bool).tril()
        weights = torch.einsum("...id,...jd->...ij", q, k).div(math.sqrt(d // self.h))
        weights = weights.masked_fill(~causal, NEG_INF).softmax(-1)
        return self.W_O(out.transpose(-3, -2).flatten(-2)), weights


def accumulated_with_means(model, optimizer, ids, pad_id, micro_batch):
    """Each micro-batch's mean, weighted by its share of the batch's tokens."""
    N = int((ids[:, 1:] != pad_id).sum())
    optimizer.zero_grad()
    total = 0.0
    for chunk in ids.split(micro_batch):
        count = int((chunk[:, 1:] != pad_id).sum())
        mean = F.cross_entropy(
            model(chunk[:, :-1]).transpose(1, 2), chunk[:, 1:], ignore_index=pad_id
        )
        (mean * count / N).backward()
        total += float(mean.detach()) * count / N
    optimizer.step()
    return total


def top_p_in_python(probs, p):
    order = sorted(range(len(probs)), key=lambda i: -float(probs[i]))
    kept, mass = [], 0.0
    for i in order:
        if mass >= p:
            break
        kept.append(i)
        mass += float(probs[i])
    out = torch.zeros_like(probs)
    out[kept] = probs[kept]
    return out / out.sum()


ANOTHER_STYLE = [
    (
        check_similarity_scores,
        lambda Q, K: torch.einsum("...nd,...md->...nm", Q, K) / Q.shape[-1] ** 0.5,
    ),
    (check_similarity_scores, lambda Q, K: (Q / math.sqrt(Q.shape[-1])) @ K.mT),
    (check_log_softmax, lambda s: s - torch.logsumexp(s, -1, keepdim=True)),
    (check_log_softmax, lambda s: F.log_softmax(s, dim=-1)),
    (
        check_softmax_backward,
        lambda a, g: torch.einsum("...i,...i->...i", a, g) - a * (a * g).sum(-1, keepdim=True),
    ),
    (check_attention_entropy, lambda a: -torch.special.xlogy(a, a).sum(-1)),
    (check_attention_entropy, lambda a: torch.special.entr(a).sum(-1)),
    (check_attention, attention_renormalised),
    (check_attention, attention_in_log_space),
    (check_attention, attention_with_sdpa),
    (
        check_left_padded_mask,
        lambda lengths, n: torch.where(left_padded(lengths, n) == 0, 0.0, NEG_INF),
    ),
    (check_causal_multi_head, FusedWithSdpa),
    (
        check_decode_embedding,
        lambda h0, W_e, W_p: F.cosine_similarity(
            (h0 - W_p[: h0.shape[-2]]).unsqueeze(-2), W_e, dim=-1
        ).argmax(-1),
    ),
    (check_accumulated_step, accumulated_with_means),
    (check_top_p_filter, top_p_in_python),
    (
        check_cached_causal_mask,
        lambda n, m: torch.zeros(n, m).masked_fill(
            torch.ones(n, m, dtype=torch.bool).tril(m - n).logical_not(), NEG_INF
        ),
    ),
    (check_score_divisor, lambda d, sq, sk: (d * sq**2 * sk**2) ** 0.5),
    (
        check_merge_partials,
        lambda m1, l1, a1, m2, l2, a2: (
            merge(m1, l1, a1, m2, l2, a2, mode="right")
            if not torch.isneginf(torch.maximum(m1, m2)).any()
            else (
                torch.maximum(m1, m2),
                *[torch.nan_to_num(t, nan=0.0) for t in merge(m1, l1, a1, m2, l2, a2)[1:]],
            )
        ),
    ),
]


@pytest.mark.parametrize(
    ("checker", "answer"), ANOTHER_STYLE, ids=[c.__name__ for c, _ in ANOTHER_STYLE]
)
def test_a_correct_answer_in_another_style_passes(checker, answer):
    result = checker(answer)
    assert result.status == PASSED, repr(result)


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"steps": 0}, "steps must be a positive int"),
        ({"seconds": -1}, "seconds must be a positive number"),
        ({"goal": "0.05"}, "goal must be a positive number"),
    ],
)
def test_the_capstone_names_a_bad_setting(settings, message):
    from nbhelpers.exercises import train_your_gpt1, use_parts

    with pytest.raises(ValueError, match=message):
        train_your_gpt1(use_parts(), **settings)
    with pytest.raises(TypeError, match="parts must come from use_parts"):
        train_your_gpt1(None)


# --- BPE and fine-tuning (notebooks 06 and 11) -------------------------------------------------


def merge_left_to_right(symbols, pair):
    out, i = [], 0
    while i < len(symbols):
        if i + 1 < len(symbols) and (symbols[i], symbols[i + 1]) == pair:
            out.append(symbols[i] + symbols[i + 1])
            i += 2
        else:
            out.append(symbols[i])
            i += 1
    return tuple(out)


def merge_step(corpus, *, weighted=True, merged=True, least=False):
    from collections import Counter

    counts = Counter()
    for symbols, times in corpus.items():
        for pair in zip(symbols, symbols[1:], strict=False):
            counts[pair] += times if weighted else 1
    best = (min if least else max)(counts, key=counts.get)
    if not merged:
        return best, dict(corpus)
    return best, {merge_left_to_right(s, best): t for s, t in corpus.items()}


def bpe_encode(text, merges, order=1):
    tokens = tuple(text)
    for pair in merges[::order]:
        tokens = merge_left_to_right(tokens, pair)
    return list(tokens)


def bpe_encode_by_rank(text, merges):
    """GPT-2's way: repeatedly merge the adjacent pair with the lowest rank."""
    rank = {tuple(pair): r for r, pair in enumerate(merges)}
    tokens = list(text)
    while len(tokens) > 1:
        pairs = [
            (rank.get((a, b), math.inf), i)
            for i, (a, b) in enumerate(zip(tokens, tokens[1:], strict=False))
        ]
        best, i = min(pairs)
        if best == math.inf:
            break
        pair = (tokens[i], tokens[i + 1])
        tokens = list(merge_left_to_right(tuple(tokens), pair))
    return tokens


@pytest.mark.parametrize(
    ("answer", "hint"),
    [
        (lambda c: merge_step(c, weighted=False), "each text counted once"),
        (lambda c: merge_step(c, merged=False), "the corpus was not merged"),
        (lambda c: merge_step(c, least=True), "the least frequent pair"),
    ],
)
def test_merge_step_mistakes(answer, hint):
    rejects(check_merge_step, answer, hint)


@pytest.mark.parametrize(
    ("answer", "hint"),
    [
        (lambda t, m: bpe_encode(t, m, order=-1), "in the wrong order"),
        (lambda t, m: list(t), "no merge was applied"),
    ],
)
def test_bpe_encode_mistakes(answer, hint):
    rejects(check_bpe_encode, answer, hint)


def similarity(a, b, *, orders=2, start="<SOS>", end="<EXTRACT>", delim=True):
    def one(x, y):
        middle = [*x, "<DELIM>", *y] if delim else [*x, *y]
        return [t for t in (start, *middle, end) if t is not None]

    return [one(a, b), one(b, a)][:orders]


@pytest.mark.parametrize(
    ("answer", "hint"),
    [
        (lambda a, b: similarity(a, b, orders=1), "one order only"),
        (lambda a, b: similarity(a, b, start=None), "<SOS> start token is missing"),
        (lambda a, b: similarity(a, b, end=None), "<EXTRACT> token is missing"),
        (lambda a, b: similarity(a, b, end="<EOS>"), "<EOS> is not the extract token"),
        (lambda a, b: similarity(a, b, delim=False), "<DELIM> token between"),
    ],
)
def test_similarity_inputs_mistakes(answer, hint):
    rejects(check_similarity_inputs, answer, hint)


def l3_variant(class_logits, labels, lm_logits, ids, lam, pad_id, *, sign=1, swap=False,
               mean=False, pad=True, shift=True):  # fmt: skip
    L2 = class_logits.log_softmax(-1).gather(-1, labels[:, None]).squeeze(-1)
    logits, targets = (lm_logits[:, :-1], ids[:, 1:]) if shift else (lm_logits, ids)
    token = logits.log_softmax(-1).gather(-1, targets[..., None]).squeeze(-1)
    if pad:
        token = token[targets != pad_id]
    L2, L1 = (L2.mean(), token.mean()) if mean else (L2.sum(), token.sum())
    return sign * ((lam * L2 + L1) if swap else (L2 + lam * L1))


@pytest.mark.parametrize(
    ("answer", "hint"),
    [
        (lambda *a: l3_variant(*a, sign=-1), "the sign"),
        (lambda *a: l3_variant(*a, swap=True), "λ multiplies L1"),
        (lambda *a: l3_variant(*a, mean=True), "means instead of sums"),
        (lambda *a: l3_variant(*a, pad=False), "<PAD> targets count"),
        (lambda *a: l3_variant(*a, shift=False), "not shifted"),
    ],
)
def test_l3_mistakes(answer, hint):
    rejects(check_l3, answer, hint)


def fine_tuning_step(classifier, optimizer, ids, labels, lam, pad_id, *, zero=True, step=True,
                     weight=None):  # fmt: skip
    from nbhelpers.fine_tuning import fine_tuning_loss

    if zero:
        optimizer.zero_grad()
    loss = fine_tuning_loss(classifier, ids, labels, lam=lam if weight is None else weight,
                            pad_id=pad_id)  # fmt: skip
    loss.backward()
    if step:
        optimizer.step()
    return loss


@pytest.mark.parametrize(
    ("answer", "hint"),
    [
        (lambda *a: fine_tuning_step(*a, zero=False), "old gradients were not cleared"),
        (lambda *a: fine_tuning_step(*a, step=False), "did not move"),
        (lambda *a: fine_tuning_step(*a, weight=0.0), "λ·L1 is missing"),
        (lambda *a: fine_tuning_step(*a, weight=1.0), "λ is ignored"),
    ],
)
def test_fine_tuning_step_mistakes(answer, hint):
    rejects(check_fine_tuning_step, answer, hint)


def fine_tuning_step_written_out(classifier, optimizer, ids, labels, lam, pad_id):
    """The loss spelled out from the log-probabilities, not through fine_tuning_loss."""
    optimizer.zero_grad()
    class_logits, lm_logits = classifier(ids)
    L2 = class_logits.log_softmax(-1).gather(-1, labels[:, None]).sum()
    token = lm_logits[:, :-1].log_softmax(-1).gather(-1, ids[:, 1:, None]).squeeze(-1)
    kept = ids[:, 1:] != pad_id
    loss = -L2 / len(ids) - lam * token[kept].sum() / kept.sum()
    loss.backward()
    optimizer.step()
    return loss.item()


OTHER_STYLES_06_11 = [
    (check_bpe_encode, bpe_encode_by_rank),
    (check_l3, lambda *a: l3_variant(*a)),
    (check_fine_tuning_step, fine_tuning_step_written_out),
    (check_similarity_inputs, lambda a, b: (similarity(a, b)[0], similarity(a, b)[1])),
]


@pytest.mark.parametrize(
    ("checker", "answer"), OTHER_STYLES_06_11, ids=[c.__name__ for c, _ in OTHER_STYLES_06_11]
)
def test_a_correct_bpe_or_fine_tuning_answer_in_another_style_passes(checker, answer):
    result = checker(answer)
    assert result.status == PASSED, repr(result)
