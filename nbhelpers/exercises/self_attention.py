"""Checkers for notebook 03, the weighted sum and self-attention: Attention(Q, K, V) with a
temperature per query, projections that give 歩く's output its subject and place and nothing
of the particles, and the entropy of each row of weights."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F

from ..support.language import tr
from .core import *  # noqa: F403 (the checkers' toolkit: core.__all__)
from .references import (
    reference_attention,
)


@leaves_state_alone
def check_attention_entropy(fn) -> CheckResult:
    """fn(weights) for rows that sum to 1 (or are all 0) must give each row's entropy in nats,
    H = -Σ_j a_j log a_j with 0 log 0 = 0: (..., n, m) -> (..., n). The reference is
    torch.special.entr."""
    check_function("fn", fn)
    if (refused := refusing_names("attention_entropy", fn, ["row_entropy"])) is not None:
        return refused
    g = seeded(23)
    masked = F.softmax(
        randn(g, 5, 5).masked_fill(torch.ones(5, 5, dtype=torch.bool).triu(1), NEG_INF), -1
    )
    inputs = [
        (tr("random weights, 4 x 6"), F.softmax(randn(g, 4, 6), -1)),
        (tr("causal weights (exact zeros)"), masked),
        (tr("one-hot and uniform rows"), torch.tensor([[1.0, 0.0, 0.0, 0.0], [0.25] * 4])),
        (tr("a row with nothing to see (all 0)"), torch.tensor([[0.5, 0.5, 0.0], [0.0, 0.0, 0.0]])),
        (tr("batched float64"), F.softmax(randn(g, 2, 3, 4, dtype=torch.float64), -1)),
    ]
    cases = []
    for name, a in inputs:
        expected = torch.special.entr(a).sum(-1)
        plogp = a * torch.log(a)
        cases.append(
            Case(
                name,
                shapes(weights=a),
                lambda f, a=a: f(a.clone()),
                expected,
                atol=1e-5 if a.dtype == torch.float32 else 1e-12,
                mistakes=[
                    (
                        tr(
                            "0 log 0 gave NaN: a zero weight contributes 0 (the limit of "
                            "p log p), so skip or zero those terms"
                        ),
                        -plogp.sum(-1),
                    ),
                    (tr("the sign: H = -Σ a log a is positive"), plogp.nan_to_num(0.0).sum(-1)),
                    (
                        tr("log base 2 (bits): the course measures entropy in nats, log = ln"),
                        -(plogp.nan_to_num(0.0) / math.log(2)).sum(-1),
                    ),
                    (
                        tr("summed over the wrong axis: one entropy per query row, dim=-1"),
                        attempt(lambda plogp=plogp: -plogp.nan_to_num(0.0).sum(-2)),
                    ),
                    (
                        tr("a mean over the keys: the entropy is a sum, H = -Σ_j a_j log a_j"),
                        -plogp.nan_to_num(0.0).mean(-1),
                    ),
                ],
            )
        )
    return run_cases(
        "attention_entropy",
        fn,
        cases,
        tr("return the entropy of each row of weights, in nats."),
    )


def tempered(Q: torch.Tensor, temperature) -> torch.Tensor:
    """Q with query i's row divided by its temperature T_i (a number, or one per query): the
    scores q_i·k_j are then divided by T_i, so F.scaled_dot_product_attention of the result
    is the reference for softmax(q_i·k_j / (√d_k T_i))."""
    T = torch.as_tensor(temperature, dtype=Q.dtype)
    return Q / (T if T.dim() == 0 else T[..., None])


def attention_cases(seed: int):
    """(name, Q, K, V, temperature or None) with n ≠ m, d_k ≠ d_v, and temperatures that are
    one number or one per query (..., n)."""
    g = seeded(seed)
    per_query = torch.tensor([0.25, 1.0, 4.0, 1.0, 0.5])
    return [
        (tr("one sentence, T = 1 (the default)"), randn(g, 5, 8), randn(g, 5, 8),
         randn(g, 5, 3), None),
        (tr("one temperature per query, T = (0.25, 1, 4, 1, 0.5)"), randn(g, 5, 8),
         randn(g, 5, 8), randn(g, 5, 3), per_query),
        (tr("n = 3 ≠ m = 6, batched, T per sentence and query (2, 3)"), randn(g, 2, 3, 4),
         randn(g, 2, 6, 4), randn(g, 2, 6, 5), torch.tensor([[0.5, 1.0, 2.0], [3.0, 1.0, 0.2]])),
        ("float64, T = 0.5", randn(g, 4, 6, dtype=torch.float64),
         randn(g, 4, 6, dtype=torch.float64), randn(g, 4, 2, dtype=torch.float64), 0.5),
        (tr("large scores, T = 2"), randn(g, 4, 8, scale=30.0), randn(g, 4, 8, scale=30.0),
         randn(g, 4, 3), 2.0),
    ]  # fmt: skip


def attention_mistakes(Q, K, V, temperature):
    d_k, d_v = Q.shape[-1], V.shape[-1]
    T = torch.as_tensor(1.0 if temperature is None else temperature, dtype=Q.dtype)
    per_row = T if T.dim() == 0 else T[..., None]  # (..., n, 1): one per query's row
    scores = Q @ K.mT

    def pair(weights):
        return weights @ V, weights

    found = [
        (
            tr("the scores are not divided by √d_k"),
            pair(F.softmax(scores / per_row, dim=-1)),
        ),
        (
            tr(
                "the scores look divided by √d_v = √{d_v}, not √d_k = √{d_k}: the scale "
                "belongs to the queries' and keys' size",
                d_v=d_v,
                d_k=d_k,
            ),
            pair(F.softmax(scores / math.sqrt(d_v) / per_row, dim=-1)) if d_v != d_k else None,
        ),
        (
            tr("the weights returned are the scores before softmax: return the softmax too"),
            (
                F.softmax(scores / math.sqrt(d_k) / per_row, dim=-1) @ V,
                scores / math.sqrt(d_k) / per_row,
            ),
        ),
        (
            tr("the rows of the weights do not sum to 1: softmax over the wrong axis? Use dim=-1"),
            attempt(lambda: pair(F.softmax(scores / math.sqrt(d_k) / per_row, dim=-2))),
        ),
        (
            tr("the scores look divided by d_k, not √d_k"),
            pair(F.softmax(scores / d_k / per_row, dim=-1)),
        ),
    ]
    if temperature is not None:
        found += [
            (
                tr("the temperature is ignored: divide each query's scores by its T"),
                pair(F.softmax(scores / math.sqrt(d_k), dim=-1)),
            ),
            (
                tr("the scores are multiplied by T: divide them by it (T > 1 flattens a row)"),
                pair(F.softmax(scores / math.sqrt(d_k) * per_row, dim=-1)),
            ),
        ]
        if T.dim() > 0:
            found.append(
                (
                    tr(
                        "each key got its own temperature: T[i] is one number for all of "
                        "query i's row, so give it a new last axis, T[..., None]"
                    ),
                    attempt(
                        lambda: pair(F.softmax(scores / math.sqrt(d_k) / T[..., None, :], dim=-1))
                    ),
                )
            )
    return found


@leaves_state_alone
def check_attention(fn) -> CheckResult:
    """fn(Q, K, V, temperature=1.0) must return (softmax(Q Kᵀ / (√d_k T)) V, the weights),
    with T one number or one temperature per query, shape (..., n)."""
    check_function("fn", fn)
    cases = []
    for name, Q, K, V, T in attention_cases(3):
        described = shapes(Q=Q, K=K, V=V) + (
            "" if T is None else f", T {tuple(torch.as_tensor(T).shape) or T}"
        )
        cases.append(
            Case(
                name,
                described,
                (lambda f, Q=Q, K=K, V=V: f(Q, K, V))
                if T is None
                else (lambda f, Q=Q, K=K, V=V, T=T: f(Q, K, V, T)),
                reference_attention(Q if T is None else tempered(Q, T), K, V),
                atol=1e-5 if Q.dtype == torch.float32 else 1e-10,
                mistakes=attention_mistakes(Q, K, V, T),
            )
        )
    return run_cases(
        "attention",
        fn,
        cases,
        tr(
            "return the attention output and the attention weights, each query's scores "
            "divided by its temperature."
        ),
    )


# What 歩く's output must say, feature by feature (V's columns: animal, place, particle), with
# the running example's values: who acts and where, and nothing of the particles.
OUTPUT_WANTED = {"animal": (">", 0.5), "place": (">", 0.25), "particle": ("<", 0.05)}


def _verb_hint(o: dict, weights: dict, scores: dict, asks_for_particles: bool) -> str:
    """What to change, from where 歩く's weight went and from its query's scores."""
    particles = weights["が"] + weights["を"]
    if max(scores.values()) - min(scores.values()) < 1e-6:
        return tr(
            "歩く's query scores every key the same, so its weights are uniform: 歩く has only "
            "the action feature, so its query is row 3 of W_Q"
        )
    if o["particle"] >= 0.05 and asks_for_particles:
        return tr(
            "歩く's query asks for the particles: it scores {particle} ({score:.2f}) above 犬 "
            "({subject:.2f}). Give the query a weight against what only the particles' keys have",
            particle="が" if scores["が"] >= scores["を"] else "を",
            score=max(scores["が"], scores["を"]),
            subject=scores["犬"],
        )
    if o["particle"] >= 0.05 and particles >= 0.05:
        return tr(
            "the particles take {share:.2f} of 歩く's weight: their keys lean towards 犬 and "
            "河岸 (x has animal 0.5 in が, place 0.5 in を), so a query that asks for an animal "
            "or a place finds them too. Let the keys tell particles apart from nouns",
            share=particles,
        )
    if o["place"] <= 0.25:
        return tr(
            "歩く's output forgets where it walks: 河岸 gets only {weight:.2f} of the weight; "
            "keep 歩く's query asking for a place as well as for an animal",
            weight=weights["河岸"],
        )
    return tr(
        "歩く's output says too little about who acts: 犬 gets only {weight:.2f} of the "
        "weight; its query must still ask for an animal most",
        weight=weights["犬"],
    )


def _asks_for_particles(q: torch.Tensor, W_K: torch.Tensor) -> bool:
    """Whether the query q scores positively what only a particle's key has: W_K's particle
    row less its part in the span of the noun rows (animal, place). Where that part is 0 the
    particles' keys are made of the nouns' and the keys, not the query, are at fault."""
    nouns = W_K[:2].T  # (d_k, 2)
    own = W_K[2] - nouns @ torch.linalg.lstsq(nouns, W_K[2, :, None]).solution[:, 0]
    return float(own.norm()) > 1e-6 and float(q @ own) > 0


@leaves_state_alone
def check_verb_output(fn) -> CheckResult:
    """fn() returns (W_Q, W_K), each (4, d_k). With the running example's X and its W_V, 歩く's
    output o = Σ_j a_j v_j must carry its subject (animal > 0.5) and its place (place > 0.25)
    and nothing of the particles (particle < 0.05). Many answers pass."""
    from ..example import running_example

    name = "verb_output"
    answer, report = designed_weights(name, fn, "my_subject_and_place()")
    if report is not None:
        return report
    W_Q, W_K = answer
    failed = design_failed(name, "my_subject_and_place()")
    example = running_example()
    X = example.X.double()
    Q, K, V = X @ W_Q, X @ W_K, X @ example.W_V.double()
    a = F.softmax(Q[4] @ K.T / math.sqrt(W_Q.shape[1]), dim=-1)  # 歩く's weights, (5,)
    o = dict(zip(OUTPUT_WANTED, (a @ V).tolist(), strict=True))
    weights = dict(zip(example.tokens, a.tolist(), strict=True))
    scores = dict(zip(example.tokens, (Q[4] @ K.T).tolist(), strict=True))  # 歩く's q · k_j
    shown = [
        "  "
        + tr(
            "歩く's weights: {weights}",
            weights="  ".join(f"{t} {w:.2f}" for t, w in weights.items()),
        ),
        "  "
        + tr(
            "歩く's output: animal {animal:.2f}, place {place:.2f}, particle {particle:.2f}",
            **o,
        ),
    ]
    met = [
        o[f] > bound if side == ">" else o[f] < bound for f, (side, bound) in OUTPUT_WANTED.items()
    ]
    if not all(met):
        return CheckResult(
            name,
            FAILED,
            [
                failed,
                "  "
                + tr("歩く's output must have animal > 0.5, place > 0.25 and particle < 0.05:"),
                *shown,
                "  "
                + tr(
                    "hint: {hint}",
                    hint=_verb_hint(o, weights, scores, _asks_for_particles(Q[4], W_K)),
                ),
            ],
        )
    passed = tr(
        "{exercise}: passed: 歩く's output carries its subject and its place, and nothing of "
        "the particles:",
        exercise=name,
    )
    return CheckResult(name, PASSED, ["✓ " + passed, *shown])
