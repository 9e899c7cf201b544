"""Notebook 09_next_token_distributions: the usual mistakes in its exercises, each with the words
its report must show, and correct answers in other styles than the worked solution."""

from __future__ import annotations

import torch
import torch.nn.functional as F

from nbhelpers.exercises import check_greedy_generate, check_sample_next_token, check_top_p_filter

from . import Exercise

NEG_INF = float("-inf")


def sampler(temperature_mode="divide", use_top_k=True, greedy=False, strict=False):
    def answer(logits, temperature, top_k, generator):
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
        return int(torch.multinomial(F.softmax(scaled, -1), 1, generator=generator))

    return answer


def greedy(
    model, ids, steps, eos, keep_prompt=True, stop=True, keep_eos=True, extra=0, context=True
):
    prompt_length = len(ids)
    with torch.no_grad():
        for _ in range(steps + extra):
            nxt = model(ids if context else ids[-1:])[-1].argmax().view(1)
            if stop and eos is not None and int(nxt) == eos and not keep_eos:
                break
            ids = torch.cat([ids, nxt])
            if stop and eos is not None and int(nxt) == eos:
                break
    return ids if keep_prompt else ids[prompt_length:]


def nucleus(probs, p, crossing=True, renormalise=True, descending=True):
    values, order = probs.sort(descending=descending)
    keep_sorted = (values.cumsum(0) - values < p) if crossing else (values.cumsum(0) <= p)
    keep = torch.zeros_like(probs, dtype=torch.bool)
    keep[order] = keep_sorted
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
        ],
        other_styles=[],
    ),
    Exercise(
        check_greedy_generate,
        "my_greedy_generate",
        mistakes=[
            (lambda m, ids, s, e: greedy(m, ids, s, e, keep_prompt=False), "only the new tokens"),
            (lambda m, ids, s, e: greedy(m, ids, s, e, stop=False), "did not stop after eos_id"),
            (
                lambda m, ids, s, e: greedy(m, ids, s, e, keep_eos=False),
                "eos_id itself must be kept",
            ),
            (lambda m, ids, s, e: greedy(m, ids, s - 1, e), "one token too few"),
            (lambda m, ids, s, e: greedy(m, ids, s, e, context=False), "saw only the last token"),
        ],
        other_styles=[],
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
        ],
        other_styles=[top_p_in_python],
    ),
]
