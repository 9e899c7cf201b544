"""Checkers for notebook 09, next-token distributions: sampling, greedy decoding, top-p."""

from __future__ import annotations

import torch
import torch.nn.functional as F

from ..gpt1 import GPT1, GPT1Config
from ..inference import generate
from ..support.language import tr
from .core import *  # noqa: F403 (the checkers' toolkit: core.__all__)
from .gpt_cases import (
    VOCAB,
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


def without_context(model, prompt, steps: int, eos) -> torch.Tensor:
    """Greedy decoding that feeds the model the last token alone: the usual slip."""
    ids = prompt.clone()
    with torch.no_grad():
        for _ in range(steps):
            token = model(ids[-1:])[-1].argmax().view(1)
            ids = torch.cat([ids, token])
            if eos is not None and int(token) == eos:
                break
    return ids


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
        last_only = (
            tr(
                "the model saw only the last token: give it the whole sequence so far, "
                "model(ids), and take the last position's logits"
            ),
            without_context(model, prompt, steps, eos),
        )
        mistakes = [last_only] + (
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
        tr("return the prompt and the greedy tokens."),
    )


@leaves_state_alone
def check_top_p_filter(fn) -> CheckResult:
    """fn(probs, p) for a distribution (V,) must keep the smallest set of most likely tokens
    whose probabilities sum to at least p (nucleus sampling, Holtzman et al. 2020), set the
    rest to 0 and renormalise. The reference sorts with torch.sort and cumsum, written here
    independently of nbhelpers."""
    check_function("fn", fn)
    smooth = F.softmax(torch.tensor([2.0, 1.0, 0.5, 0.0, -0.5, -1.0, 1.5, -2.0]), -1)

    # powers of two: every running sum is exact, and 0.5 + 0.25 lands on p = 0.75 itself
    exact = torch.tensor([0.25, 0.0625, 0.5, 0.125, 0.0625])

    def nucleus(probs, p, *, include_crossing=True, renormalise=True, descending=True, at=False):
        values, order = probs.sort(descending=descending, stable=True)
        before = values.cumsum(0) - values  # mass of the more likely tokens
        if at:  # the usual recipe's slip: a token is kept while the mass before it is <= p
            keep_sorted = before <= p
        else:
            keep_sorted = before < p if include_crossing else values.cumsum(0) <= p
        keep = torch.zeros_like(probs, dtype=torch.bool).scatter(0, order, keep_sorted)
        kept = probs * keep
        return kept / kept.sum() if renormalise else kept

    cases = []
    for name, probs, p in (
        ("p = 0.5", smooth, 0.5),
        (tr("0.5 + 0.25 is exactly p = 0.75"), exact, 0.75),
        ("p = 0.9", smooth, 0.9),
        (tr("p = 1: every token"), smooth, 1.0),
        (tr("p = 0.1: the top token alone"), smooth, 0.1),
    ):
        cases.append(
            Case(
                name,
                f"probs {tuple(probs.shape)}, p = {p:g}",
                lambda f, p=p, probs=probs: f(probs.clone(), p),
                nucleus(probs, p),
                atol=1e-6,
                mistakes=[
                    (
                        tr(
                            "one token too many: a prefix that sums to exactly p already "
                            "reaches p, so the next token is out (keep a token while the mass "
                            "before it is below p)"
                        ),
                        nucleus(probs, p, at=True),
                    ),
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
                    (
                        tr(
                            "each probability was compared with p: top-p keeps the likeliest "
                            "tokens until their running sum reaches p"
                        ),
                        (lambda kept: kept / kept.sum())(probs * (probs >= p)),
                    ),
                    (
                        tr(
                            "the running sum was taken in the vocabulary's order: sort by "
                            "probability first"
                        ),
                        (lambda kept: kept / kept.sum())(probs * ((probs.cumsum(0) - probs) < p)),
                    ),
                ],
            )
        )
    return run_cases(
        "top_p_filter",
        fn,
        cases,
        tr("return probs kept to the nucleus of p, renormalised."),
    )
