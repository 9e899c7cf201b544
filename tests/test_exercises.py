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
    check_attention,
    check_cached_attention_step,
    check_causal_mask,
    check_embed,
    check_gpt1_block,
    check_greedy_generate,
    check_layer_norm,
    check_log_likelihood,
    check_masked_attention,
    check_merge_heads,
    check_multi_head_attention,
    check_one_hot,
    check_online_softmax_attention,
    check_sample_next_token,
    check_self_attention,
    check_similarity_scores,
    check_softmax,
    check_split_heads,
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
    check_softmax: "my_softmax",
    check_attention: "my_attention",
    check_self_attention: "MySelfAttention",
    check_causal_mask: "my_causal_mask",
    check_masked_attention: "my_masked_attention",
    check_split_heads: "my_split_heads",
    check_merge_heads: "my_merge_heads",
    check_multi_head_attention: "MyMultiHeadAttention",
    check_one_hot: "my_one_hot",
    check_embed: "my_embed",
    check_layer_norm: "my_layer_norm",
    check_gpt1_block: "MyGPT1Block",
    check_log_likelihood: "my_log_likelihood",
    check_sample_next_token: "my_sample_next_token",
    check_greedy_generate: "my_greedy_generate",
    check_online_softmax_attention: "my_online_softmax_attention",
    check_cached_attention_step: "my_cached_attention_step",
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


@pytest.mark.parametrize(
    ("answer", "hint"),
    [
        (lambda s: F.softmax(s, dim=0), "softmax over the wrong axis"),
        (lambda s: torch.exp(s) / torch.exp(s).sum(-1, keepdim=True), "exp overflows"),
        (lambda s: F.softmax(s, dim=-1), "all -inf must give zeros, not NaN"),
        (lambda s: torch.exp(s - s.amax(-1, keepdim=True)), "not normalised"),
        (lambda s: F.softmax(s, dim=-2), "softmax over the wrong axis"),
    ],
)
def test_softmax_mistakes(answer, hint):
    rejects(check_softmax, answer, hint)


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


def mask_from(pattern, fill=NEG_INF, as_bool=False):
    def answer(n):
        blocked = pattern(torch.ones(n, n, dtype=torch.bool))
        return blocked if as_bool else torch.zeros(n, n).masked_fill(blocked, fill)

    return answer


@pytest.mark.parametrize(
    ("answer", "hint"),
    [
        (mask_from(lambda t: t.tril(-1)), "the mask is reversed"),
        (mask_from(lambda t: t.triu(0)), "off by one"),
        (mask_from(lambda t: t.triu(1), as_bool=True), "a boolean mask"),
        (mask_from(lambda t: t.triu(1), fill=-1e9), "is not -inf"),
        (mask_from(lambda t: ~t.triu(1), as_bool=True), "True where allowed"),
    ],
)
def test_causal_mask_mistakes(answer, hint):
    rejects(check_causal_mask, answer, hint)


def masked_attention_with(pattern=lambda t: t.triu(1), after=False, scale=True):
    def answer(Q, K, V):
        n = Q.shape[-2]
        blocked = pattern(torch.ones(n, n, dtype=torch.bool))
        scores = scores_of(Q, K) / (math.sqrt(Q.shape[-1]) if scale else 1.0)
        if after:
            return (F.softmax(scores, -1) * ~blocked) @ V
        return F.softmax(scores.masked_fill(blocked, NEG_INF), -1).nan_to_num(0.0) @ V

    return answer


@pytest.mark.parametrize(
    ("answer", "hint"),
    [
        (masked_attention_with(pattern=lambda t: t & False), "no mask"),
        (masked_attention_with(pattern=lambda t: t.tril(-1)), "the mask is reversed"),
        (masked_attention_with(pattern=lambda t: t.triu(0)), "off by one"),
        (masked_attention_with(after=True), "applied after softmax"),
        (masked_attention_with(scale=False), "not divided by √d_k"),
    ],
)
def test_masked_attention_mistakes(answer, hint):
    rejects(check_masked_attention, answer, hint)


@pytest.mark.parametrize(
    ("answer", "hint"),
    [
        (lambda x, h: x.reshape(*x.shape[:-2], h, x.shape[-2], -1), "without the transpose"),
        (lambda x, h: x.unflatten(-1, (h, x.shape[-1] // h)), "transpose it to (..., n_h"),
        (lambda x, h: x.unflatten(-1, (-1, h)).transpose(-1, -2).transpose(-3, -2),
         "contiguous slice"),
        (lambda x, h: x.unflatten(-1, (h, -1)).transpose(-3, -2)[..., :1, :], "expected shape"),
    ],
)  # fmt: skip
def test_split_heads_mistakes(answer, hint):
    result = check_split_heads(answer)
    assert result.status == FAILED and hint in repr(result), repr(result)


@pytest.mark.parametrize(
    ("answer", "hint"),
    [
        (lambda x: x.reshape(*x.shape[:-3], x.shape[-2], -1), "without the transpose"),
        (lambda x: x.transpose(-3, -2), "flatten the last two axes"),
        (lambda x: x.flatten(-3, -2), "expected shape"),
        (lambda x: x.sum(-3), "expected shape"),
    ],
)
def test_merge_heads_mistakes(answer, hint):
    result = check_merge_heads(answer)
    assert result.status == FAILED and hint in repr(result), repr(result)


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


@pytest.mark.parametrize(
    ("answer", "hint"),
    [
        (lambda ids, V: F.one_hot(ids, V), "must be floating point"),
        (lambda ids, V: F.one_hot(ids, V).float().transpose(-2, -1), "U is transposed"),
        # F.one_hot raises for the id V - 1: the report shows that exception
        (lambda ids, V: F.one_hot(ids, V - 1).float(), "the answer raised RuntimeError"),
        (lambda ids, V: F.one_hot(ids + 1, V + 1)[..., :-1].float(), "one column to the right"),
    ],
)
def test_one_hot_mistakes(answer, hint):
    result = check_one_hot(answer)
    assert result.status == FAILED and hint in repr(result), repr(result)


def lookup(ids, W_e):
    return W_e[ids]


@pytest.mark.parametrize(
    ("answer", "hint"),
    [
        (lambda ids, W_e, W_p: lookup(ids, W_e), "the positions are missing"),
        (lambda ids, W_e, W_p: W_p[: ids.shape[-1]].expand(*ids.shape, -1), "only the positions"),
        (lambda ids, W_e, W_p: lookup(ids, W_e) + W_p[0], "every position got W_p[0]"),
        (lambda ids, W_e, W_p: lookup(ids, W_e) + W_p[1 : ids.shape[-1] + 1], "shifted by one"),
        (lambda ids, W_e, W_p: lookup(ids, W_e) + W_p, "the answer raised RuntimeError"),
    ],
)
def test_embed_mistakes(answer, hint):
    result = check_embed(answer)
    assert result.status == FAILED and hint in repr(result), repr(result)


def centred(x):
    return x - x.mean(-1, keepdim=True)


def biased_variance(x):
    return centred(x).pow(2).mean(-1, keepdim=True)


@pytest.mark.parametrize(
    ("answer", "hint"),
    [
        (lambda x, g, b, eps=1e-5: g * centred(x) / (biased_variance(x).sqrt() + eps) + b,
         "eps is outside the square root"),
        (lambda x, g, b, eps=1e-5: g * centred(x) / torch.sqrt(x.var(-1, keepdim=True) + eps) + b,
         "unbiased"),
        (lambda x, g, b, eps=1e-5: g * (x - x.mean(0)) / torch.sqrt(x.var(0, unbiased=False) + eps)
         + b, "wrong axis"),
        (lambda x, g, b, eps=1e-5: g * centred(x) / torch.sqrt(biased_variance(x) + 1e-5) + b,
         "the eps argument is ignored"),
        (lambda x, g, b, eps=1e-5: centred(x) / torch.sqrt(biased_variance(x) + eps),
         "the gain and bias are missing"),
    ],
)  # fmt: skip
def test_layer_norm_mistakes(answer, hint):
    rejects(check_layer_norm, answer, hint)


def block_class(order="post", mask=True, first_residual=True):
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
            g = self.ln_1((h if first_residual else 0) + self.attn(h))
            return self.ln_2(g + self.ffn(g))

    return Answer


@pytest.mark.parametrize(
    ("answer", "hint"),
    [
        (block_class(mask=False), "no causal mask"),
        (block_class(order="pre"), "this is pre-LN"),
        (block_class(first_residual=False), "the first residual connection is missing"),
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


def full_matrix_attention(Q, K, V, block_size):
    return F.softmax(scores_of(Q, K) / math.sqrt(Q.shape[-1]), -1) @ V


def online(Q, K, V, block_size, running_max=True, rescale=True, scale=True):
    factor = 1 / math.sqrt(Q.shape[-1]) if scale else 1.0
    best = torch.full((*Q.shape[:-1], 1), NEG_INF if running_max else 0.0)
    total = torch.zeros(*Q.shape[:-1], 1)
    weighted = torch.zeros(*Q.shape[:-1], V.shape[-1])
    for start in range(0, K.shape[-2], block_size):
        s = scores_of(Q, K[..., start : start + block_size, :]) * factor
        new = torch.maximum(best, s.amax(-1, keepdim=True)) if running_max else best
        shrink = torch.exp(best - new) if rescale else torch.ones_like(best)
        e = torch.exp(s - new)
        total = total * shrink + e.sum(-1, keepdim=True)
        weighted = weighted * shrink + e @ V[..., start : start + block_size, :]
        best = new
    return weighted / total


@pytest.mark.parametrize(
    ("answer", "hint"),
    [
        (full_matrix_attention, "built a full"),
        (lambda Q, K, V, b: online(Q, K, V, b, running_max=False), "exp overflows"),
        (lambda Q, K, V, b: online(Q, K, V, b, rescale=False), "rescale the earlier sums"),
        (lambda Q, K, V, b: online(Q, K, V, b, scale=False), "not divided by √d_k"),
    ],
)
def test_online_softmax_attention_mistakes(answer, hint):
    rejects(check_online_softmax_attention, answer, hint)


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
