"""Notebook 09_next_token_distributions: the usual mistakes in its exercises, each with the words
its report must show, and correct answers in other styles than the worked solution."""

from __future__ import annotations

import heapq
import math

import torch
import torch.nn.functional as F

from nbhelpers.exercises import check_beam_search, check_sample_next_token, check_top_p_filter

from . import Exercise

NEG_INF = float("-inf")


def sampler(temperature_mode="divide", use_top_k=True, greedy=False, strict=False, generator=True):
    def answer(logits, temperature, top_k, generator_):
        if greedy:
            return int(logits.argmax())
        scaled = {
            "divide": logits / temperature,
            "multiply": logits * temperature,
            "ignore": logits,
        }[temperature_mode]
        if use_top_k and top_k is not None:
            kth = scaled.topk(top_k).values[-1]
            scaled = scaled.masked_fill(scaled <= kth if strict else scaled < kth, NEG_INF)
        drawn_with = {"generator": generator_} if generator else {}
        return int(torch.multinomial(F.softmax(scaled, -1), 1, **drawn_with))

    return answer


def beam(
    model,
    ids,
    width,
    steps,
    eos,
    *,
    context=True,
    total=True,
    add_probs=False,
    stop_at_eos=True,
    first_finished=False,
    normalise=False,
    keep_prompt=True,
    eos_truthy=False,
    eos_anywhere=False,
    shrink=False,
):
    """A learner's beam search, one candidate at a time in Python lists."""
    beam_, finished = [(ids.tolist(), 0.0)], []
    with torch.no_grad():
        for _ in range(steps):
            extensions = []
            for tokens, score in beam_:
                seen = torch.tensor(tokens if context else tokens[-1:])
                log_p = F.log_softmax(model(seen)[-1].double(), -1)
                for token, lp in enumerate(log_p.tolist()):
                    gain = math.exp(lp) if add_probs else lp
                    extensions.append((tokens + [token], (score if total else 0.0) + gain))
            extensions.sort(key=lambda e: -e[1])
            beam_ = []
            kept = width - len(finished) if shrink else width  # shrink: never refilled
            for tokens, score in extensions[:kept]:
                ends = (eos if eos_truthy else eos is not None) and tokens[-1] == eos
                if eos_anywhere:
                    ends = eos in tokens
                (finished if ends and stop_at_eos else beam_).append((tokens, score))
            if not beam_ or (first_finished and finished):
                break
    pool = finished or beam_
    if normalise:
        pool = [(t, s / (len(t) - len(ids))) for t, s in pool]
    best = max(pool, key=lambda c: c[1])[0]
    return torch.tensor(best if keep_prompt else best[len(ids) :])


def beam_with_heap(model, ids, width, steps, eos):
    """Another style: heapq.nlargest over batched log-probabilities."""
    live, done = [(0.0, ids)], []
    with torch.no_grad():
        for _ in range(steps):
            if not live:
                break
            batch = torch.stack([c for _, c in live])
            log_p = F.log_softmax(model(batch)[:, -1].double(), -1)
            options = [
                (s + float(log_p[b, t]), torch.cat([c, torch.tensor([t])]))
                for b, (s, c) in enumerate(live)
                for t in range(log_p.shape[1])
            ]
            kept = heapq.nlargest(width, options, key=lambda o: o[0])
            live = [o for o in kept if eos is None or int(o[1][-1]) != eos]
            done += [o for o in kept if eos is not None and int(o[1][-1]) == eos]
    return max(done or live, key=lambda o: o[0])[1]


def nucleus(probs, p, crossing=True, renormalise=True, descending=True, ties="lower ids"):
    flipped = probs.flip(0) if ties == "higher ids" else probs
    values, order = flipped.sort(descending=descending, stable=True)
    keep_sorted = (values.cumsum(0) - values < p) if crossing else (values.cumsum(0) <= p)
    keep = torch.zeros_like(probs, dtype=torch.bool)
    keep[order] = keep_sorted
    if ties == "higher ids":
        keep = keep.flip(0)
    if ties == "all":
        keep = probs >= probs[keep].min()
    kept = probs * keep
    return kept / kept.sum() if renormalise else kept


def top_p_as_the_usual_recipe(probs, p):
    """The recipe many tutorials copy: drop a token once the running sum before it exceeds
    p. At a prefix that sums to exactly p it keeps one token too many."""
    values, order = probs.sort(descending=True)
    remove = values.cumsum(0) > p
    remove[1:] = remove[:-1].clone()
    remove[0] = False
    kept = probs.clone()
    kept[order[remove]] = 0.0
    return kept / kept.sum()


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


EXERCISES = [
    Exercise(
        check_sample_next_token,
        "my_sample_next_token",
        mistakes=[
            (sampler(temperature_mode="multiply"), "the temperature multiplies the logits"),
            (sampler(use_top_k=False), "top_k is ignored"),
            (sampler(temperature_mode="ignore"), "the temperature is ignored"),
            (sampler(greedy=True), "greedy decoding"),
            (sampler(strict=True), "one token short of k"),
            (sampler(generator=False), "draw with the generator passed in"),
        ],
        other_styles=[],
    ),
    Exercise(
        check_beam_search,
        "my_beam_search",
        mistakes=[
            (lambda *a: beam(*a, context=False), "saw only the last token"),
            (lambda *a: beam(*a, total=False), "ranked by their last token alone"),
            (lambda *a: beam(*a, add_probs=True), "probabilities were added"),
            (lambda *a: beam(*a, stop_at_eos=False), "went on growing"),
            (lambda *a: beam(*a, first_finished=True), "stopped at the first finished"),
            (lambda *a: beam(*a, normalise=True), "divided by the length"),
            (lambda *a: beam(*a, keep_prompt=False), "only the new tokens"),
            (lambda *a: beam(*a, eos_truthy=True), "went on growing"),
            (lambda *a: beam(*a, shrink=True), "the beam stayed smaller"),
            (lambda *a: beam(*a, eos_anywhere=True), "an eos_id in its prompt"),
        ],
        other_styles=[beam, beam_with_heap],
    ),
    Exercise(
        check_top_p_filter,
        "my_top_p_filter",
        mistakes=[
            (lambda probs, p: nucleus(probs, p, crossing=False), "the token that crosses p"),
            (top_p_as_the_usual_recipe, "one token too many"),
            (lambda probs, p: nucleus(probs, p, renormalise=False), "not renormalised"),
            (lambda probs, p: nucleus(probs, p, descending=False), "the least likely tokens"),
            (
                lambda probs, p: probs * (probs >= p) / (probs * (probs >= p)).sum(),
                "compared with p",
            ),
            (
                lambda probs, p: (
                    probs
                    * (probs.cumsum(0) - probs < p)
                    / (probs * (probs.cumsum(0) - probs < p)).sum()
                ),
                "in the vocabulary's order",
            ),
            (lambda probs, p: nucleus(probs, p, ties="all"), "every token tied"),
            (lambda probs, p: nucleus(probs, p, ties="higher ids"), "the higher ids were kept"),
        ],
        other_styles=[top_p_in_python],
    ),
]
