"""Sentences sampled from a model and judged by the grammar that the model learned."""

from __future__ import annotations

import torch

from ..corpus import JapaneseGrammar
from ..gpt1 import GPT1
from ..inference import generate
from ..support.threads import check_cpu_threads
from ..support.threads import cpu_threads as threads_for_cpu
from ..support.validation import check_positive_int
from .heldout import check_model_fits_grammar


def sample_sentences(
    model: GPT1,
    grammar: JapaneseGrammar,
    n: int,
    *,
    seed: int = 0,
    temperature: float = 1.0,
    cpu_threads: int | None = 1,
) -> list[tuple[str, bool]]:
    """n sentences sampled from `model` after <SOS>, each token drawn from its next-token
    distribution at `temperature`, up to <EOS> or the end of the context (an unfinished one
    ends in "…"): (text, whether the grammar can produce it). Seeded: the same weights and
    seed give the same sentences, and the same seed draws the same random numbers whatever
    the weights. `cpu_threads`: torch's CPU threads meanwhile (None: leave them).

    Notebooks 08 and 09.
    """
    check_model_fits_grammar(model, grammar)
    check_positive_int("n", n)
    check_cpu_threads(cpu_threads)
    tokenizer = grammar.tokenizer
    start = tokenizer.encode("").to(model.device).repeat(n, 1)
    with threads_for_cpu(cpu_threads if model.device.type == "cpu" else None):
        out = generate(
            model,
            start,
            model.config.n_ctx - 1,
            temperature=temperature,
            eos_id=tokenizer.eos_id,
            generator=torch.Generator().manual_seed(seed),
        )
    sentences = []
    for row in out.cpu():
        ids = tokenizer.until_eos(row)
        ended = ids[-1] == tokenizer.eos_id
        text = tokenizer.to_text(ids, sep=" ") + ("" if ended else " …")
        sentences.append((text, ended and grammar.sentence_probability(ids) > 0))
    return sentences
