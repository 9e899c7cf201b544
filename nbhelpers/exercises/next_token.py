"""Checkers for notebook 09, next-token distributions: sampling, beam search, top-p."""

from __future__ import annotations

import functools

import torch
import torch.nn.functional as F

from ..inference import log_likelihood
from ..support.language import N_, tr
from .core import *  # noqa: F403 (the checkers' toolkit: core.__all__)
from .gpt_cases import (
    decoding_model,
)
from .references import (
    filtered_distribution,
)


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
        (tr("T = 0.7, top_k = 2"), 0.7, 2),
    ]
    cases = []
    for number, (name, temperature, top_k) in enumerate(settings, start=1):

        def run(answer, temperature=temperature, top_k=top_k, number=number):
            generator = torch.Generator().manual_seed(100 + number)
            counts = torch.zeros(len(logits))
            for _ in range(draws):
                token = int(answer(logits.clone(), temperature, top_k, generator))
                if not 0 <= token < len(logits):
                    raise Rejected(
                        tr(
                            "returned {token}, not a token id in [0, {size})",
                            token=token,
                            size=len(logits),
                        ),
                        tr("return the index of the drawn token, an int from 0 to n_vocab - 1"),
                    )
                counts[token] += 1
            problem = chi_square_problem(
                counts, filtered_distribution(logits, temperature, top_k), draws
            )
            if problem:
                hint = sampling_hint(counts, draws, logits, temperature, top_k)
                raise Rejected(
                    problem,
                    hint
                    or tr(
                        "compare how often each token came with softmax(logits / T) over the top k"
                    ),
                )
            if number == 1 and not reproducible(answer, logits):
                raise Rejected(
                    tr("the same generator seed gave different tokens"),
                    tr("draw with the generator passed in, so that its seed decides the token"),
                )
            passed = torch.zeros(())
            return passed, passed, []

        inputs = f"logits {tuple(logits.shape)}, temperature = {temperature:g}, top_k = {top_k}"
        cases.append(Case(name, inputs, run, derived=True))
    result = run_cases(
        "sample_next_token",
        fn,
        cases,
        tr("return one token id, sampled at temperature T from the top_k most likely tokens."),
    )
    if result:
        result.lines[0] += tr(", {draws} draws each, chi-square at significance 1e-4", draws=draws)
    return result


def reproducible(answer, logits) -> bool:
    """Whether 20 draws with a generator seeded 7 come out the same twice."""
    runs = []
    for _ in range(2):
        generator = torch.Generator().manual_seed(7)
        runs.append([int(answer(logits.clone(), 1.0, None, generator)) for _ in range(20)])
    return runs[0] == runs[1]


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
        (
            tr(
                "one token short of k: keep every logit at least as large as the k-th largest, "
                "the k-th included"
            ),
            filtered_distribution(logits, temperature, top_k - 1) if top_k and top_k > 1 else None,
        ),
    ]
    for hint, p in candidates:
        if p is not None and not torch.allclose(
            p.double(), filtered_distribution(logits, temperature, top_k).double()
        ):
            if chi_square_problem(counts, p, draws) is None:
                return hint
    return None


def beam_search(model, ids, beam_width: int, max_new_tokens: int, eos_id, mistake=None):
    """The reference beam search, or one of BEAM_MISTAKES when `mistake` names it.

    A candidate's score is the total log-probability of its new tokens. Each step extends
    every unfinished candidate by every token and keeps the beam_width best extensions of
    them all; one that ends in eos_id is finished and leaves the beam. Returns the best
    finished candidate (the best unfinished one if none finished), prompt included."""
    beam, finished = [(0.0, ids)], []
    with torch.no_grad():
        for _ in range(max_new_tokens):
            if not beam:
                break
            batch = torch.stack([candidate for _, candidate in beam])  # (B, n + t)
            seen = batch[:, -1:] if mistake == "last token only" else batch
            log_p = F.log_softmax(model(seen)[:, -1].double(), dim=-1)  # (B, V)
            before = torch.tensor([score for score, _ in beam], dtype=torch.float64)
            scores = {
                "last token's log P only": log_p,
                "probabilities added": before.unsqueeze(1) + log_p.exp(),
            }.get(mistake, before.unsqueeze(1) + log_p)
            # the beam is refilled to beam_width every step; "shrinks for good" keeps only
            # the places the finished candidates left
            width = beam_width - len(finished) if mistake == "shrinks for good" else beam_width
            if width <= 0:
                break
            top = scores.flatten().topk(min(width, scores.numel()))
            beam = []
            for score, index in zip(top.values.tolist(), top.indices.tolist(), strict=True):
                row, token = divmod(index, scores.shape[1])  # which candidate, which token
                candidate = torch.cat([batch[row], batch.new_tensor([token])])
                ends = eos_id is not None and token == eos_id and mistake != "extends past eos"
                if mistake == "eos anywhere":  # the prompt's own eos_id counted as an end
                    ends = eos_id is not None and eos_id in candidate.tolist()
                (finished if ends else beam).append((score, candidate))
            if finished and mistake == "stops at the first finished":
                break
    pool = finished or beam
    if mistake == "length-normalised":
        pool = [(score / (len(c) - len(ids)), c) for score, c in pool]
    best = max(pool, key=lambda scored: scored[0])[1]
    return best[len(ids) :] if mistake == "new tokens only" else best


BEAM_MISTAKES = {
    "last token's log P only": N_(
        "candidates were ranked by their last token alone: a candidate's score is the sum of "
        "the log-probabilities of all its new tokens"
    ),
    "probabilities added": N_(
        "probabilities were added: add log-probabilities (multiply probabilities)"
    ),
    "extends past eos": N_(
        "a candidate that ends in eos_id went on growing: it is finished and leaves the beam"
    ),
    "stops at the first finished": N_(
        "the search stopped at the first finished candidate: go on until the beam is empty, "
        "then return the best finished one"
    ),
    "length-normalised": N_(
        "the scores were divided by the length: compare total log-probabilities"
    ),
    "new tokens only": N_("only the new tokens: return the prompt followed by them"),
    # after the others: on a short search it can give what one of them gives
    "last token only": N_("the model saw only the last token: give it the whole candidate so far"),
    "shrinks for good": N_(
        "the beam stayed smaller after a candidate finished: each step keeps the beam_width "
        "best extensions of the candidates still in the beam"
    ),
    "eos anywhere": N_(
        "a candidate was called finished for an eos_id in its prompt: only a new token that is "
        "eos_id finishes it"
    ),
}


@functools.cache
def _beams(which: str, prompt: tuple, width: int, steps: int, eos: int) -> dict:
    """The reference's candidate and each mistake's, computed once per process: 9 searches
    a case, the slow part of the checker."""
    model = _beam_model(which)
    prompt = torch.tensor(prompt)
    return {mistake: beam_search(model, prompt, width, steps, eos, mistake)
            for mistake in (None, *BEAM_MISTAKES)}  # fmt: skip


def _beam_model(which: str):
    from ..experiments.course_model import load_course_model

    if which == "tiny":
        return decoding_model(16)
    return load_course_model(torch.device("cpu"), dtype=torch.float64)


def beam_case(name, which, prompt, width, steps, eos):
    beams = _beams(which, tuple(prompt.tolist()), width, steps, eos)
    mistakes = [(tr(hint), beams[mistake]) for mistake, hint in BEAM_MISTAKES.items()]
    model = _beam_model(which)  # a fresh one: an answer cannot spoil the next check
    return Case(
        name,
        f"ids {tuple(prompt.shape)}, beam_width = {width}, max_new_tokens = {steps}, "
        f"eos_id = {eos}",
        lambda f: torch.as_tensor(f(model, prompt.clone(), width, steps, eos)),
        beams[None],
        atol=0.0,
        mistakes=mistakes,
    )


@leaves_state_alone
def check_beam_search(fn) -> CheckResult:
    """fn(model, ids, beam_width, max_new_tokens, eos_id) for ids (n,) must return the
    candidate that beam_search above returns, prompt included. Then, on the course model
    from <SOS>, which sentence each width finds, against the grammar's most likely one."""
    from ..corpus import JapaneseGrammar

    check_function("fn", fn)
    grammar = JapaneseGrammar()
    tokenizer = grammar.tokenizer
    course, start = _beam_model("course"), tokenizer.encode("")
    cases = [
        beam_case(tr("width 1 is greedy"), "tiny", torch.tensor([1]), 1, 6, 2),
        beam_case(tr("width 3, eos_id = 0"), "tiny", torch.tensor([1, 3]), 3, 8, 0),
        # a candidate finishes at the first step: the next steps keep 2 again, not 1
        beam_case(tr("a candidate finishes early, width 2"), "tiny", torch.tensor([1]), 2, 6, 3),
        beam_case(tr("eos_id already in the prompt"), "tiny", torch.tensor([1, 2, 3]), 2, 6, 2),
        beam_case(
            tr("the course model, width 2"),
            "course",
            start,
            2,
            grammar.max_length - 1,
            tokenizer.eos_id,
        ),  # fmt: skip
        beam_case(
            tr("the course model from 犬 が, width 4"),
            "course",
            tokenizer.encode("犬 が"),
            4,
            12,
            tokenizer.eos_id,
        ),  # fmt: skip
    ]
    result = run_cases("beam_search", fn, cases, tr("return the best candidate, prompt included."))
    if result:
        best, p_best = grammar.most_likely_sentence()
        for width in (1, 2, 5, 10):
            found = fn(course, start.clone(), width, grammar.max_length - 1, tokenizer.eos_id)
            mark = "★" if tokenizer.decode(found)[1:] == best else " "
            result.lines.append(
                tr(
                    "  {mark} beam_width {width:2d}: {sentence} (P_model {p_model:.4f}, "
                    "P_true {p_true:.4f})",
                    mark=mark,
                    width=width,
                    sentence=tokenizer.to_text(found, sep=" "),
                    p_model=float(log_likelihood(course, torch.as_tensor(found)).exp().detach()),
                    p_true=grammar.sentence_probability(torch.as_tensor(found)),
                )
            )
        result.lines.append(
            tr(
                "  ★ the grammar's most likely sentence, {sentence} (P_true {p:.4f})",
                sentence=" ".join(best[:-1]),
                p=p_best,
            )
        )
    return result


def nucleus(probs, p, *, include_crossing=True, renormalise=True, descending=True, at=False):
    """Top-p written with torch.sort and cumsum, independently of nbhelpers; the switches make
    the usual mistakes."""
    values, order = probs.sort(descending=descending, stable=True)
    before = values.cumsum(0) - values  # mass of the more likely tokens
    if at:  # the usual recipe's slip: a token is kept while the mass before it is <= p
        keep_sorted = before <= p
    else:
        keep_sorted = before < p if include_crossing else values.cumsum(0) <= p
    keep = torch.zeros_like(probs, dtype=torch.bool).scatter(0, order, keep_sorted)
    kept = probs * keep
    return kept / kept.sum() if renormalise else kept


def _renormalised(kept):
    return kept / kept.sum()


def _every_tie(probs, p):  # every token as likely as the one that crosses p
    values = probs.sort(descending=True).values
    crossing = values[int((values.cumsum(0) < p).sum().clamp(max=len(values) - 1))]
    return _renormalised(probs * (probs >= crossing))


# (what it is, probs, p): powers of two make every running sum exact, so 0.5 + 0.25 lands on
# p = 0.75 itself; three tokens tie at 0.3 where p = 0.5 needs two of them, the lower ids
_SMOOTH = F.softmax(torch.tensor([2.0, 1.0, 0.5, 0.0, -0.5, -1.0, 1.5, -2.0]), -1)
TOP_P_CASES = (
    ("p = 0.5", _SMOOTH, 0.5),
    (N_("a tie at the crossing"), torch.tensor([0.1, 0.3, 0.3, 0.3]), 0.5),
    (N_("0.5 + 0.25 is exactly p = 0.75"), torch.tensor([0.25, 0.0625, 0.5, 0.125, 0.0625]), 0.75),
    ("p = 0.9", _SMOOTH, 0.9),
    (N_("p = 1: every token"), _SMOOTH, 1.0),
    (N_("p = 0.1: the top token alone"), _SMOOTH, 0.1),
)  # fmt: skip

_COMPARED = N_("each probability was compared with p: top-p keeps the likeliest tokens until "
               "their running sum reaches p")  # fmt: skip
# (the hint, the mistaken filter: (probs, p) -> probs); the first, on its own, can leave what
# another slip leaves
TOP_P_MISTAKES = (
    (_COMPARED, lambda q, p: _renormalised(
        q * ((q >= p) | (torch.arange(len(q)) == q.argmax())))),
    (N_("one token too many: a prefix that sums to exactly p already reaches p, so the next "
        "token is out (keep a token while the mass before it is below p)"),
     lambda q, p: nucleus(q, p, at=True)),
    (N_("the token that crosses p is left out: keep tokens until their sum reaches p, that one "
        "included"), lambda q, p: nucleus(q, p, include_crossing=False)),
    (N_("not renormalised: divide the kept probabilities by their sum"),
     lambda q, p: nucleus(q, p, renormalise=False)),
    (N_("the least likely tokens were kept: sort in descending order"),
     lambda q, p: nucleus(q, p, descending=False)),
    (_COMPARED, lambda q, p: _renormalised(q * (q >= p))),
    (N_("every token tied with the one that crosses p was kept: keep only as many as the sum "
        "needs, the lower ids first"), _every_tie),
    (N_("of tokens that tie, the higher ids were kept: the lower id counts as the more likely "
        "(sort with stable=True)"), lambda q, p: nucleus(q.flip(0), p).flip(0)),
    (N_("the running sum was taken in the vocabulary's order: sort by probability first"),
     lambda q, p: _renormalised(q * ((q.cumsum(0) - q) < p))),
)  # fmt: skip


@leaves_state_alone
def check_top_p_filter(fn) -> CheckResult:
    """fn(probs, p) for a distribution (V,) must keep the smallest set of most likely tokens
    whose probabilities sum to at least p (nucleus sampling, Holtzman et al. 2020), set the
    rest to 0 and renormalise. The reference is `nucleus` above."""
    check_function("fn", fn)
    cases = [
        Case(tr(name), f"probs {tuple(probs.shape)}, p = {p:g}",
             lambda f, p=p, probs=probs: f(probs.clone(), p), nucleus(probs, p), atol=1e-6,
             mistakes=[(tr(hint), attempt(wrong, probs, p)) for hint, wrong in TOP_P_MISTAKES])
        for name, probs, p in TOP_P_CASES
    ]  # fmt: skip
    return run_cases(
        "top_p_filter", fn, cases, tr("return probs kept to the nucleus of p, renormalised.")
    )
