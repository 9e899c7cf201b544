"""Recompute the numbers quoted in notebook 09's "Answers to Try it" (cell 48).

Everything runs on the CPU with the course's own code, as the notebook does: the stored
model `load_course_model("cpu", dtype=torch.float64)`, the grammar `JapaneseGrammar()`,
`next_token_distribution` (what the explorer shows), `kl_divergence` (the explorer's
readout), `generate` (seeded like the notebook's `write` / `grammatical_share`:
`torch.Generator().manual_seed(0)`, `grammar.max_length - 1` new tokens, `<EOS>` as eos_id)
and, for the split by clause, notebook 08 cell 38 (held-out set `make_heldout(grammar,
n=2000, seed=1)`, evaluated with the stored model in float64).

prose_numbers.toml names these functions as nb09.<name>; tests/test_prose_numbers.py runs them.
"""

from __future__ import annotations

from functools import cache

import torch
import torch.nn.functional as F

from nbhelpers import JapaneseGrammar, generate, load_course_model, next_token_distribution
from nbhelpers.corpus.grammar import RULES
from nbhelpers.experiments.heldout import make_heldout
from nbhelpers.gpt1 import GPT1
from nbhelpers.statistics import kl_divergence

# The path along which the T = 3 answer measures the forbidden mass: the steps that write
# 犬 が 河岸 を 歩く, i.e. the prefixes <SOS>, 犬, 犬 が, 犬 が 河岸, 犬 が 河岸 を.
WALK = ("犬", "が", "河岸", "を", "歩く")
SAMPLES = 2000  # "of 2,000 sentences sampled at T = 3 from <SOS>"
SEED = 0  # the notebook's write() and grammatical_share() seed torch.Generator with 0


# ---------------------------------------------------------------- the course's objects
@cache
def grammar() -> JapaneseGrammar:
    """The notebook's grammar (cell 4)."""
    return JapaneseGrammar()


@cache
def model() -> GPT1:
    """The stored trained model in float64 on the CPU (notebook 09 cell 4)."""
    return load_course_model("cpu", dtype=torch.float64)


def _ids(prefix: str) -> torch.Tensor:
    return grammar().tokenizer.encode(prefix)


@cache
def model_distribution(prefix: str, temperature: float = 1.0) -> torch.Tensor:
    """The explorer's model bars: P(next | prefix) at `temperature`, no top-k cut."""
    return next_token_distribution(model(), _ids(prefix), temperature, None)


@cache
def true_distribution(prefix: str) -> torch.Tensor:
    """The grammar's exact P(next | prefix)."""
    return grammar().true_next_token_distribution(_ids(prefix))


def model_p(prefix: str, token: str, temperature: float = 1.0) -> float:
    """The model's probability of `token` after `prefix` (explorer, top-k 41)."""
    return float(model_distribution(prefix, temperature)[grammar().tokenizer.ids[token]])


def true_p(prefix: str, token: str) -> float:
    """The grammar's probability of `token` after `prefix`."""
    return float(true_distribution(prefix)[grammar().tokenizer.ids[token]])


def kl_at(prefix: str) -> float:
    """The explorer's readout: KL(true ‖ model) in nats after `prefix`, at T = 1."""
    return kl_divergence(true_distribution(prefix), model_distribution(prefix))


# ---------------------------------------------------------------- forbidden mass on a walk
def forbidden_mass_along(temperature: float, walk: tuple[str, ...] = WALK) -> list[float]:
    """Model probability on tokens the grammar forbids (truth 0) at each step that writes
    `walk` (prefixes <SOS>, walk[:1], ..., walk[:-1]), at `temperature`, no top-k cut."""
    masses = []
    for i in range(len(walk)):
        prefix = " ".join(walk[:i])
        forbidden = true_distribution(prefix) == 0
        masses.append(float(model_distribution(prefix, temperature)[forbidden].sum()))
    return masses


# ---------------------------------------------------------------- split by clause (nb 08)
@cache
def subject_kl_by_clause() -> tuple[float, float]:
    """Notebook 08 cell 38 with the stored model: mean KL (nats) of the held-out positions
    whose next token is a subject, (first clause, second clause)."""
    tokenizer = grammar().tokenizer
    heldout = make_heldout(grammar(), n=2000, seed=1)
    with torch.no_grad():
        chunks = heldout.ids[:, :-1].split(250)
        q = torch.cat([F.softmax(model()(chunk), dim=-1) for chunk in chunks])
    kl = kl_divergence(heldout.true_probs.double(), q)
    conjunctions = torch.tensor([tokenizer.ids[c] for c in ("とき", "ので", "から")])
    second = torch.isin(heldout.ids[:, :-1], conjunctions).cumsum(dim=1) > 0
    chosen = heldout.rules == RULES.index("subject")
    return float(kl[chosen & ~second].mean()), float(kl[chosen & second].mean())


def subject_kl_ratio() -> float:
    """Second clause's subject KL over the first clause's ('about 56 times more')."""
    first, second = subject_kl_by_clause()
    return second / first


# ---------------------------------------------------------------- sampled sentences
@cache
def sampled_rows(temperature: float, count: int = SAMPLES, seed: int = SEED) -> tuple:
    """`count` sentences from <SOS> at `temperature` (no top-k), as the notebook's
    grammatical_share samples them: one batch, generator seeded with `seed`,
    grammar.max_length - 1 new tokens (= n_ctx - 1 = 19 here), <EOS> ends a row.
    Each row is cut at its first <EOS> (kept); tuples of ids with <SOS>."""
    tokenizer = grammar().tokenizer
    out = generate(
        model(),
        tokenizer.encode("").repeat(count, 1),
        grammar().max_length - 1,
        temperature=temperature,
        eos_id=tokenizer.eos_id,
        generator=torch.Generator().manual_seed(seed),
    )
    return tuple(tuple(tokenizer.until_eos(row)) for row in out.tolist())


def first_forbidden(row: tuple[int, ...]) -> int | None:
    """1-based index, among the generated tokens, of the first one the grammar cannot
    produce after its prefix; None if the row is a sentence of the grammar. A row that
    stops without <EOS> (context full) counts as failing at the step after its last token."""
    g = grammar()
    state = 0
    generated = row[1:]
    for i, token in enumerate(generated):
        if state == g._done or g.next_state[state, token] < 0:
            return i + 1
        state = int(g.next_state[state, token])
    return None if state == g._done else len(generated) + 1


@cache
def first_forbidden_positions(temperature: float) -> tuple[int | None, ...]:
    """first_forbidden of every sampled row at `temperature`, checked against
    grammar.sentence_probability (the notebook's ✓/✗)."""
    rows = sampled_rows(temperature)
    positions = tuple(first_forbidden(row) for row in rows)
    for row, position in zip(rows, positions, strict=True):
        assert (position is not None) == (grammar().sentence_probability(list(row)) == 0)
    return positions


def broken_percent(temperature: float) -> float:
    """Percentage of the 2,000 sampled sentences that break a rule."""
    positions = first_forbidden_positions(temperature)
    return 100 * sum(p is not None for p in positions) / len(positions)


def forbidden_within_percent(tokens: int = 5, temperature: float = 3.0) -> float:
    """Percentage of all 2,000 sentences with a forbidden token among their first `tokens`
    generated tokens."""
    positions = first_forbidden_positions(temperature)
    return 100 * sum(p is not None and p <= tokens for p in positions) / len(positions)
