"""Notebook 06_embeddings_one_hot: the usual mistakes in its exercises, each with the words
its report must show, and correct answers in other styles than the worked solution."""

from __future__ import annotations

import math
from collections import Counter

import torch
import torch.nn.functional as F

from nbhelpers.exercises import (
    check_bpe_encode,
    check_decode_embedding,
    check_embed,
    check_merge_step,
)

from . import Exercise, Says

NEG_INF = float("-inf")


def lookup(ids, W_e):
    return W_e[ids]


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


def merge_right_to_left(symbols, pair):
    flipped = merge_left_to_right(
        tuple(s[::-1] for s in symbols[::-1]), (pair[1][::-1], pair[0][::-1])
    )
    return tuple(s[::-1] for s in flipped[::-1])


def merge_step(
    corpus,
    *,
    weighted=True,
    merged=True,
    least=False,
    as_text=False,
    lost=False,
    right=False,
    short=False,
):

    counts = Counter()
    for symbols, times in corpus.items():
        if as_text:  # str.count on the joined text: overlapping pairs are missed
            text = " ".join(symbols)
            for a, b in set(zip(symbols, symbols[1:], strict=False)):
                counts[(a, b)] += (times if weighted else 1) * text.count(f"{a} {b}")
            continue
        for pair in zip(symbols[: -2 if short else None], symbols[1:], strict=False):
            counts[pair] += times if weighted else 1
    best = (min if least else max)(counts, key=counts.get)
    if not merged:
        return best, dict(corpus)
    if lost:  # a dict comprehension: two texts that become one keep only the last count
        return best, {merge_left_to_right(s, best): t for s, t in corpus.items()}
    out = Counter()
    for s, t in corpus.items():
        out[(merge_right_to_left if right else merge_left_to_right)(s, best)] += t
    return best, dict(out)


def merge_by_replace(corpus):
    """Counts right, but merges with str.replace on the symbols joined by spaces."""
    best, _ = merge_step(corpus)
    a, b = best
    return best, {
        tuple(" ".join(s).replace(f"{a} {b}", a + b).split(" ")): t for s, t in corpus.items()
    }


def bpe_encode(text, merges, order=1, once=False, right=False, words=False):
    if words:  # split into words first: the spaces are lost
        return [t for w in text.split() for t in bpe_encode(w, merges)]
    tokens = tuple(text)
    for pair in merges[::order]:
        if once:  # the first occurrence only
            for i in range(len(tokens) - 1):
                if (tokens[i], tokens[i + 1]) == tuple(pair):
                    tokens = (*tokens[:i], tokens[i] + tokens[i + 1], *tokens[i + 2 :])
                    break
        else:
            tokens = (merge_right_to_left if right else merge_left_to_right)(tokens, tuple(pair))
    return list(tokens)


def longest_match(text, merges):
    """Greedy longest-match against the vocabulary: what WordPiece does, not BPE."""
    vocab = sorted({*text, *(a + b for a, b in merges)}, key=len, reverse=True)
    tokens, i = [], 0
    while i < len(text):
        token = next(t for t in vocab if text.startswith(t, i))
        tokens.append(token)
        i += len(token)
    return tokens


def encode_by_replace(text, merges):
    """Each merge made with str.replace on the tokens joined by spaces."""
    joined = " ".join(text)
    for a, b in merges:
        joined = joined.replace(f"{a} {b}", a + b)
    return joined.split(" ")


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


EXERCISES = [
    Exercise(
        check_embed,
        "my_embed",
        mistakes=[
            (lambda ids, W_e, W_p, start=0: lookup(ids, W_e), "the positions are missing"),
            (
                lambda ids, W_e, W_p, start=0: W_p[start : start + ids.shape[-1]].expand(
                    *ids.shape, -1
                ),
                "only the positions",
            ),
            (
                lambda ids, W_e, W_p, start=0: (
                    lookup(ids, W_e) + W_p[start : start + ids.shape[-1]]
                ).squeeze(),
                "axis 0 (of 1) is missing",
            ),
            (
                lambda ids, W_e, W_p, start=0: W_e[ids - 1] + W_p[start : start + ids.shape[-1]],
                "the ids were shifted by one",
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
            (
                lambda ids, W_e, W_p, start=0: lookup(ids, W_e) + W_p,
                Says("the answer raised RuntimeError"),
            ),
            (
                lambda ids, W_e, W_p: lookup(ids, W_e) + W_p[: ids.shape[-1]],
                Says("the answer raised TypeError"),
            ),
        ],
        other_styles=[],
    ),
    Exercise(
        check_decode_embedding,
        "my_decode_embedding",
        mistakes=[
            (
                lambda h0, W_e, W_p: torch.cdist(h0, W_e).argmin(-1),
                "the positions were not taken away",
            ),
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
            (
                lambda h0, W_e, W_p: torch.cdist(h0 - W_p[1 : h0.shape[-2] + 1], W_e).argmin(-1),
                "the positions are shifted by one",
            ),
        ],
        other_styles=[
            lambda h0, W_e, W_p: F.cosine_similarity(
                (h0 - W_p[: h0.shape[-2]]).unsqueeze(-2), W_e, dim=-1
            ).argmax(-1)
        ],
    ),
    Exercise(
        check_merge_step,
        "my_merge_step",
        mistakes=[
            (lambda c: merge_step(c, weighted=False), "each text counted once"),
            (lambda c: merge_step(c, merged=False), "the corpus was not merged"),
            (lambda c: merge_step(c, least=True), "the least frequent pair"),
            (lambda c: merge_step(c, as_text=True), "overlapping pairs were missed"),
            (merge_by_replace, "the merge crossed a symbol boundary"),
            (lambda c: merge_step(c, lost=True), "one count was lost"),
            (lambda c: merge_step(c, right=True), "merged from the right"),
            (lambda c: merge_step(c, short=True), "the last pair of each text was missed"),
        ],
        other_styles=[],
    ),
    Exercise(
        check_bpe_encode,
        "my_bpe_encode",
        mistakes=[
            (lambda t, m: bpe_encode(t, m, order=-1), "in the wrong order"),
            (lambda t, m: list(t), "no merge was applied"),
            (longest_match, "the longest known token was matched"),
            (lambda t, m: bpe_encode(t, m, once=True), "only the first occurrence"),
            (encode_by_replace, "the merge crossed a token boundary"),
            (lambda t, m: bpe_encode(t, m, right=True), "merged from the right"),
            (lambda t, m: bpe_encode(t, m, words=True), "the spaces were dropped"),
        ],
        other_styles=[bpe_encode_by_rank],
    ),
]
