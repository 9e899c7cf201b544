"""Checkers for notebook 10, attention at scale: merging partial softmax results, the causal
mask after a cache, and generation with a KV cache of your own."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F

from ..support.language import N_, tr
from .core import *  # noqa: F403 (the checkers' toolkit: core.__all__)
from .gpt_cases import decoding_model
from .references import (
    partial_of,
)


@leaves_state_alone
def check_merge_partials(fn) -> CheckResult:
    """fn(m1, l1, acc1, m2, l2, acc2) must merge the partial results of two blocks of keys
    into those of both: m = max(m1, m2), l = l1 e^(m1 - m) + l2 e^(m2 - m), acc the same way;
    acc / l is then attention over all the keys. An empty block (m = -inf, l = 0) must not
    turn the merge into NaN. The reference is F.scaled_dot_product_attention over all the
    keys and torch.logsumexp of all the scores."""
    check_function("fn", fn)
    g = seeded(26)
    cases = []
    for name, batch, n, m1, m2, d, scale, empty in (
        (tr("two blocks of 4 keys"), (), 3, 4, 4, 4, 1.0, False),
        (tr("batched, blocks of 3 and 5"), (2,), 2, 3, 5, 8, 1.0, False),
        (tr("large scores: the second block's maximum is far higher"), (), 2, 3, 3, 4, 6.0, False),
        (tr("an empty block, and a query that sees nothing at all"), (), 3, 4, 2, 4, 1.0, True),
    ):
        Q = randn(g, *batch, n, d, scale=scale)
        K1, K2 = randn(g, *batch, m1, d, scale=scale), randn(g, *batch, m2, d, scale=scale)
        if scale > 1:
            K2 = K2 + Q.mean(-2, keepdim=True)  # the second block scores much higher
        V1, V2 = randn(g, *batch, m1, d), randn(g, *batch, m2, d)
        first = partial_of(Q, K1, V1)
        if empty:
            second = (
                torch.full_like(first[0], NEG_INF),
                torch.zeros_like(first[1]),
                torch.zeros_like(first[2]),
            )
            K, V = K1, V1
        else:
            second = partial_of(Q, K2, V2)
            K, V = torch.cat([K1, K2], -2), torch.cat([V1, V2], -2)
        s = Q @ K.mT / math.sqrt(d)
        m = s.amax(-1, keepdim=True)
        total = torch.exp(torch.logsumexp(s, -1, keepdim=True) - m)
        acc = F.scaled_dot_product_attention(Q, K, V) * total
        if empty:  # query 0 may see no key of the first block either: nothing at all
            first = tuple(t.clone() for t in first)
            for t, value in zip((*first, m, total, acc), (NEG_INF, 0.0, 0.0) * 2, strict=True):
                t[..., 0, :] = value
        (a1, b1, c1), (a2, b2, c2) = first, second
        top = torch.maximum(a1, a2)
        f1, f2 = torch.exp(a1 - top), torch.exp(a2 - top)  # e^(m_i - m): NaN where both are -inf
        naive_l, naive_acc = b1 * f1 + b2 * f2, c1 * f1 + c2 * f2  # the merge without a guard
        mistakes = [
            (
                tr("the sums were added without rescaling: multiply each by e^(m_i - m) first"),
                (top, b1 + b2, c1 + c2),
            ),
            (
                tr(
                    "rescaled by e^(m - m_i): the factor is e^(m_i - m), at most 1, for the "
                    "block whose maximum was lower"
                ),
                (
                    top,
                    b1 * torch.exp(top - a1) + b2 * torch.exp(top - a2),
                    c1 * torch.exp(top - a1) + c2 * torch.exp(top - a2),
                ),
            ),
            (
                tr("the maximum is a sum: m = max(m1, m2), the larger of the two, not m1 + m2"),
                (
                    a1 + a2,
                    b1 * torch.exp(-a2) + b2 * torch.exp(-a1),  # e^(m_i - (m1 + m2))
                    c1 * torch.exp(-a2) + c2 * torch.exp(-a1),
                ),
            ),
            (
                tr(
                    "acc was divided by l: the merge keeps acc unnormalised, so that a third "
                    "block can still be merged; acc / l comes only at the end"
                ),
                (top, naive_l, naive_acc / naive_l),
            ),
            (
                tr(
                    "m is the second block's maximum, not the larger of the two: with "
                    "m = max(m1, m2) every factor e^(m_i - m) is at most 1"
                ),
                (a2, b1 * torch.exp(a1 - a2) + b2, c1 * torch.exp(a1 - a2) + c2),
            ),
            (
                tr("only l was rescaled: acc needs the same factors as l"),
                (top, naive_l, c1 + c2),
            ),
            (
                tr(
                    "an empty block made NaN: with m_i = -inf its factor e^(m_i - m) is 0, "
                    "and so is its l_i"
                ),
                (top, naive_l, naive_acc) if empty else None,
            ),
        ]
        cases.append(
            Case(
                name,
                shapes(m1=a1, acc1=c1) + tr(", {first} + {second} keys", first=m1, second=m2),
                lambda f, first=first, second=second: f(*first, *second),
                (m, total, acc),
                atol=1e-5,
                mistakes=mistakes,
            )
        )
    return run_cases(
        "merge_partials",
        fn,
        cases,
        tr("return the merged (m, l, acc)."),
    )


@leaves_state_alone
def check_cached_causal_mask(fn) -> CheckResult:
    """fn(n, m) must give the additive (n, m) causal mask for n new queries after m - n cached
    keys: the new tokens sit at positions m - n .. m - 1, so query i sees keys j <= i + m - n.
    The reference is torch.tril with the diagonal moved by m - n, the rule of torch's
    lower-right causal bias (torch.nn.attention.bias.causal_lower_right; the tests compare the
    two, since importing that module here would load torch's compiler stack, seconds)."""
    check_function("fn", fn)
    if (
        refused := refusing_names("cached_causal_mask", fn, ["causal_mask", "causal_lower_right"])
    ) is not None:
        return refused
    cases = []
    for name, n, m in (
        (tr("one new token after 4 cached ones"), 1, 5),
        (tr("3 new tokens after 2 cached ones"), 3, 5),
        (tr("no cache: the square mask"), 4, 4),
    ):
        allowed = torch.ones(n, m, dtype=torch.bool).tril(diagonal=m - n)
        cases.append(
            Case(
                name,
                f"n = {n}, m = {m}",
                lambda f, n=n, m=m: f(n, m),
                torch.zeros(n, m).masked_fill(~allowed, NEG_INF),
                atol=0.0,
                mistakes=[
                    (
                        tr(
                            "the offset is missing: new query i sits at position i + m - n, "
                            "so it sees keys j <= i + m - n, the cache included"
                        ),
                        torch.zeros(n, m).masked_fill(
                            torch.ones(n, m, dtype=torch.bool).triu(1), NEG_INF
                        ),
                    ),
                    (
                        tr("the cached keys are hidden: every new token may see the whole cache"),
                        torch.zeros(n, m).masked_fill(
                            torch.ones(n, m, dtype=torch.bool).triu(m - n + 1)
                            | (torch.arange(m) < m - n),
                            NEG_INF,
                        ),
                    ),
                    (
                        tr("off by one: a new token sees its own key, j = i + m - n"),
                        torch.zeros(n, m).masked_fill(
                            torch.ones(n, m, dtype=torch.bool).triu(m - n), NEG_INF
                        ),
                    ),
                    (
                        tr("a boolean mask: the exercise asks for the additive 0 / -inf form"),
                        allowed,
                    ),
                    (
                        tr(
                            "the diagonal moved the wrong way: the new queries sit m - n "
                            "positions down, so the offset is + (m - n), triu(m - n + 1)"
                        ),
                        torch.full((n, m), NEG_INF).triu(n - m + 1),
                    ),
                    (
                        tr(
                            "the mask is flipped: 0 where a key may be seen, -inf where it is "
                            "in the future"
                        ),
                        torch.zeros(n, m).masked_fill(allowed, NEG_INF),
                    ),
                ],
            )
        )
    return run_cases(
        "cached_causal_mask",
        fn,
        cases,
        tr("return the (n, m) additive mask of n new queries over m keys."),
    )


def cached_generate(model, ids, max_new_tokens: int, mistake=None):
    """The reference for Exercise 2, greedy generation with a hand-kept KV cache: the prompt
    runs once, then each step only the new token, its keys and values appended to its block's
    cache. `mistake` (a key of CACHE_MISTAKES) makes one of the usual slips."""
    caches = [None] * len(model.blocks)  # one (K, V) per block, each (n_h, t, d_head)
    if mistake == "one cache for all blocks":
        caches = [None]
    new, t, out = ids, 0, ids
    with torch.no_grad():
        for _ in range(max_new_tokens):
            n = len(new)
            start = 0 if mistake == "no position offset" else t
            h = model.W_e(new) + model.W_p[start : start + n]  # (n, d): positions t .. t+n-1
            for layer, block in enumerate(model.blocks):
                attn, slot = block.attn, 0 if mistake == "one cache for all blocks" else layer

                def heads(x, attn=attn, n=n):  # (n, d) -> (n_h, n, d_head)
                    return x.view(n, attn.n_heads, -1).transpose(0, 1)

                q, k, v = heads(attn.W_Q(h)), heads(attn.W_K(h)), heads(attn.W_V(h))
                old = caches[slot]
                K, V = (
                    (k, v)
                    if old is None
                    else (torch.cat([old[0], k], 1), torch.cat([old[1], v], 1))
                )
                if mistake != "cache not kept" and not (mistake == "only the prompt kept" and old):
                    caches[slot] = (K, V)
                if mistake == "new keys not attended" and old is not None:
                    K, V = old
                m = K.shape[1]
                late = torch.arange(m)[None, :] > torch.arange(m - n, m)[:, None]
                if mistake == "mask aligned top-left":  # is_causal=True with n < m queries
                    late = torch.arange(m)[None, :] > torch.arange(n)[:, None]
                if mistake == "no mask on the prompt":
                    late = torch.zeros_like(late)
                mask = torch.zeros(n, m, dtype=h.dtype).masked_fill(late, float("-inf"))
                d_k = h.shape[-1] if mistake == "scaled by d_model" else q.shape[-1]
                weights = torch.softmax(q @ K.transpose(1, 2) / math.sqrt(d_k) + mask, -1)
                attended = attn.W_O((weights @ V).transpose(0, 1).reshape(n, -1))  # (n, d)
                h = block.add_and_norm(h, attended)
            next_id = model.logits(h[-1]).argmax().view(1)
            out, t = torch.cat([out, next_id]), t + n
            new = next_id
    return out[len(ids) :] if mistake == "new tokens only" else out


CACHE_MISTAKES = {
    "no position offset": N_(
        "every new token was embedded at position 0: the token at step t sits at position t, "
        "so its embedding is W_e[u] + W_p[t]"
    ),
    "no mask on the prompt": N_(
        "the prompt ran without the causal mask: when several positions run at once, each may "
        "see only the ones up to itself"
    ),
    "one cache for all blocks": N_(
        "the blocks shared one cache: each block keeps its own keys and values"
    ),
    "cache not kept": N_(
        "the keys and values were not kept: append each step's to its block's cache"
    ),
    "new keys not attended": N_(
        "the new token did not attend to its own key: append its key and value first"
    ),
    "only the prompt kept": N_(
        "only the prompt's keys and values stay in the cache: append each new token's too"
    ),
    "mask aligned top-left": N_(
        "the one new query saw only the first key: is_causal=True (or tril on n × m) aligns "
        "the mask top-left, but the new query is the last position and sees every cached key"
    ),
    "scaled by d_model": N_(
        "the scores were divided by √d_model: each head divides by √d_head, its own key size"
    ),
    "new tokens only": N_("only the new tokens: return the prompt followed by them"),
}


def rows_through_W_Q(fn, model, ids, steps) -> int:
    """How many positions went through the first block's W_Q while fn generated: the prompt
    once and one per new token with a cache, many more without one."""
    count = [0]

    def counting(module, inputs, output):
        count[0] += inputs[0].reshape(-1, inputs[0].shape[-1]).shape[0]

    handle = model.blocks[0].attn.W_Q.register_forward_hook(counting)
    try:
        fn(model, ids.clone(), steps)
    finally:
        handle.remove()
    return count[0]


@leaves_state_alone
def check_cached_generate(fn) -> CheckResult:
    """fn(model, ids, max_new_tokens) for ids (n,) must return the greedy continuation that
    generate(..., top_k=1) returns, prompt included, computing the prompt once and then one
    new position per step from its own per-block cache of keys and values."""
    from ..corpus import JapaneseGrammar
    from ..experiments.course_model import load_course_model
    from ..inference import generate

    check_function("fn", fn)
    tiny = decoding_model(5, vocab_size=12, n_layers=2)
    course = load_course_model(torch.device("cpu"), dtype=torch.float64)
    words = JapaneseGrammar().tokenizer.encode("犬 が")
    cases = []
    for name, model, ids, steps in (
        (tr("2 blocks, a prompt of 3 tokens"), tiny, torch.tensor([1, 3, 5]), 7),
        (tr("2 blocks, a prompt of 1 token"), tiny, torch.tensor([4]), 6),
        (tr("the course model after <SOS> 犬 が"), course, words, 12),
    ):
        expected = generate(model, ids, steps, top_k=1)
        mistakes = [(tr(hint), cached_generate(model, ids, steps, mistake))
                    for mistake, hint in CACHE_MISTAKES.items()]  # fmt: skip
        cases.append(
            Case(name, f"ids {tuple(ids.shape)}, max_new_tokens = {steps}",
                 lambda f, m=model, i=ids, s=steps: torch.as_tensor(f(m, i.clone(), s)),
                 expected, atol=0.0, mistakes=mistakes)
        )  # fmt: skip
    prompt, steps = torch.tensor([1, 3, 5]), 8
    allowed = len(prompt) + steps  # the prompt once, then one row per step
    cases.append(
        Case(
            tr("the prompt runs once, then one new position per step"),
            tr("rows through W_Q: at most {allowed}", allowed=allowed),
            lambda f: torch.tensor(rows_through_W_Q(f, tiny, prompt, steps) <= allowed),
            torch.tensor(True),
            atol=0.0,
            mistakes=[
                (
                    tr(
                        "the whole sequence ran again at every step: run only the new "
                        "token, with the keys and values kept from before"
                    ),
                    torch.tensor(False),
                )
            ],  # fmt: skip
        )
    )
    return run_cases(
        "cached_generate",
        fn,
        cases,
        tr("return the prompt and the greedy tokens, computed with your own KV cache."),
    )
