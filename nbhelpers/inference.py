"""Using a trained GPT: next-token distributions, generation, and the log-likelihood L1.

    P(u | context) = softmax(h_L W_eᵀ / T)   over the vocabulary, from the last position only
    L1(U) = Σ_i log P(u_i | u_{i-k} .. u_{i-1})

Temperature T must be > 0: as T -> 0 the softmax tends to a one-hot on the argmax, but T = 0
itself divides by zero. Greedy decoding is `top_k=1`: only the most likely token is kept, and
it gets probability 1 whatever the temperature.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F

from .gpt1 import GPT1, check_gpt1, evaluating
from .kv_cache import KVCache
from .support.checks import status
from .support.language import ntr, tr
from .support.validation import check_token_ids, checked, checking, is_int, is_number


def check_sampling(temperature: float, top_k: int | None, vocab_size: int) -> None:
    if not is_number(temperature):
        raise TypeError(
            tr(
                "temperature must be a number > 0, got {got_type}",
                got_type=type(temperature).__name__,
            )
        )
    if not (temperature > 0 and math.isfinite(temperature)):
        raise ValueError(
            tr(
                "temperature must be a finite number > 0, got {temperature!r}; for "
                "greedy decoding use top_k=1",
                temperature=temperature,
            )
        )
    if top_k is not None:
        if not is_int(top_k):
            raise TypeError(
                tr(
                    "top_k must be an int >= 1 or None, got {got_type}",
                    got_type=type(top_k).__name__,
                )
            )
        if top_k < 1:
            raise ValueError(
                tr(
                    "top_k must be >= 1 (or None for no cut), got {top_k}",
                    top_k=top_k,
                )
            )
        if top_k > vocab_size:
            raise ValueError(
                tr(
                    "top_k must be <= vocab_size={vocab_size}, got {top_k}",
                    vocab_size=vocab_size,
                    top_k=top_k,
                )
            )


def filter_logits(logits: torch.Tensor, temperature: float = 1.0, top_k: int | None = None):
    """logits / T, with every token outside the k largest set to -inf.

    Notebook 09.
    """
    if checking():
        check_sampling(temperature, top_k, logits.shape[-1])
    logits = logits / temperature
    if top_k is not None and top_k < logits.shape[-1]:
        kth = torch.topk(logits, top_k, dim=-1).values[..., -1:]
        logits = logits.masked_fill(logits < kth, float("-inf"))
    return logits


def next_token_distribution(
    model: GPT1, ids: torch.Tensor, temperature: float = 1.0, top_k: int | None = None
) -> torch.Tensor:
    """P(next token | ids): softmax(logits of the last position / T), top-k filtered.

    ids: (n,) or (B, n) token ids on the model's device, n <= the context n_ctx. Returns
    (vocab,) or (B, vocab) probabilities. Ties at the k-th largest logit are all kept.

    Notebook 09.
    """
    check_gpt1(model)
    check_sampling(temperature, top_k, model.config.vocab_size)
    model.check_ids(ids)
    with evaluating(model), checked():
        logits = model(ids, last_only=True)  # (..., vocab)
    return F.softmax(filter_logits(logits, temperature, top_k), dim=-1)


def check_generation(model, ids, max_new_tokens, temperature, top_k, eos_id, generator, cache):
    """Every argument of `generate`, checked once (the tokens it adds are the model's own)."""
    check_gpt1(model)
    model.check_ids(ids)
    if ids.dim() > 2:
        raise ValueError(
            tr(
                "ids must have shape (n,) or (B, n), got {ids_shape}",
                ids_shape=tuple(ids.shape),
            )
        )
    if not is_int(max_new_tokens) or max_new_tokens < 0:
        raise ValueError(
            tr(
                "max_new_tokens must be an int >= 0, got {max_new_tokens!r}",
                max_new_tokens=max_new_tokens,
            )
        )
    check_sampling(temperature, top_k, model.config.vocab_size)
    if eos_id is not None and (not is_int(eos_id) or not 0 <= eos_id < model.config.vocab_size):
        raise ValueError(
            tr(
                "eos_id must be an id in [0, {vocab_size}), got {eos_id!r}",
                vocab_size=model.config.vocab_size,
                eos_id=eos_id,
            )
        )
    if generator is not None and not isinstance(generator, torch.Generator):
        raise TypeError(
            tr(
                "generator must be a torch.Generator, got {got_type}",
                got_type=type(generator).__name__,
            )
        )
    n, n_ctx = ids.shape[-1], model.config.n_ctx
    if cache and n + max_new_tokens > n_ctx:
        raise ValueError(
            ntr(
                "max_new_tokens={max_new_tokens} after a prompt of {n} token needs "
                "{needed} positions, but the context holds n_ctx={n_ctx}; use "
                "max_new_tokens <= {room}",
                "max_new_tokens={max_new_tokens} after a prompt of {n} tokens needs "
                "{needed} positions, but the context holds n_ctx={n_ctx}; use "
                "max_new_tokens <= {room}",
                n,
                max_new_tokens=max_new_tokens,
                needed=n + max_new_tokens,
                n_ctx=n_ctx,
                room=n_ctx - n,
            )
        )


def generate(
    model: GPT1,
    ids: torch.Tensor,
    max_new_tokens: int,
    temperature: float = 1.0,
    top_k: int | None = None,
    eos_id: int | None = None,
    *,
    generator: torch.Generator | None = None,
    cache: bool = False,
    return_logits: bool = False,
):
    """Extend ids (n,) or (B, n) by up to max_new_tokens tokens, one at a time: the one
    generation loop of the course.

    Each step takes the logits of the last position, divides them by T and keeps the top k
    (next_token_distribution); greedy decoding (top_k=1) takes the argmax, anything else
    samples (`generator`, a torch.Generator on any device, makes the samples reproducible).
    Without a cache every step runs the model on the last n_ctx tokens (the window k of L1);
    with cache=True the prompt runs once and each step runs the one new token against the
    keys and values kept in a KVCache (notebook 10), which needs n + max_new_tokens <= n_ctx.
    With eos_id, a sentence that has produced it gets eos_id from then on, and generation
    stops once every sentence has. With return_logits, also the logits that chose each new
    token, (..., steps, vocab).

    Notebooks 09 and 10.
    """
    check_generation(model, ids, max_new_tokens, temperature, top_k, eos_id, generator, cache)
    batch = ids.unsqueeze(0) if ids.dim() == 1 else ids  # (B, n)
    out, chosen = batch, []
    finished = torch.zeros(batch.shape[0], dtype=torch.bool, device=batch.device)
    with evaluating(model), checked():  # no_grad: what it returns can go on to autograd
        if cache:
            kept = KVCache(model, batch.shape[0], batch.shape[-1] + max_new_tokens)
        new = batch
        for _ in range(max_new_tokens):
            if cache:
                last = model(new, last_only=True, cache=kept)  # (B, vocab)
            else:
                last = model(out[:, -model.config.n_ctx :], last_only=True)
            chosen.append(last)
            if top_k == 1:  # greedy: the argmax, no random draw
                new = last.argmax(dim=-1, keepdim=True)
            else:
                probs = F.softmax(filter_logits(last, temperature, top_k), dim=-1)
                where = generator.device if generator is not None else probs.device
                new = torch.multinomial(probs.to(where), 1, generator=generator)
                new = new.to(out.device)
            if eos_id is not None:
                new = new.masked_fill(finished.unsqueeze(1), eos_id)
                finished |= new.squeeze(1) == eos_id
            out = torch.cat([out, new], dim=1)  # (B, n + steps so far)
            if eos_id is not None and finished.all():
                break
    out = out if ids.dim() == 2 else out.squeeze(0)
    if not return_logits:
        return out
    logits = torch.stack(chosen, dim=-2) if chosen else batch.new_empty(0)  # (B, steps, V)
    return out, (logits if ids.dim() == 2 else logits.squeeze(0))


def log_likelihood(model: GPT1, ids: torch.Tensor, pad_id: int | None = None) -> torch.Tensor:
    """L1(U) = Σ_i log P(u_i | u_<i) for i = 1 .. n-1: the first token (<SOS>) is given.

    ids: (n,) or (B, n); returns a scalar or (B,). Targets equal to pad_id count for nothing.
    Differentiable: -L1 / N is the mean cross-entropy a training step minimises.

    Notebook 09.
    """
    check_gpt1(model)
    check_token_ids(ids, model.config.vocab_size, model.config.n_ctx)
    if ids.shape[-1] < 2:
        raise ValueError(
            tr(
                "ids must hold at least 2 tokens (a context and a target), got shape {ids_shape}",
                ids_shape=tuple(ids.shape),
            )
        )
    logits = model(ids[..., :-1])
    targets = ids[..., 1:]
    log_probs = F.log_softmax(logits, dim=-1).gather(-1, targets.unsqueeze(-1)).squeeze(-1)
    if pad_id is not None:
        log_probs = log_probs.masked_fill(targets == pad_id, 0.0)
    return log_probs.sum(dim=-1)


def generate_without_cache(
    model: GPT1, ids: torch.Tensor, max_new_tokens: int, *, return_logits: bool = False
):
    """Greedy generation that reruns the whole model on all tokens so far at every step:
    generate(..., top_k=1). ids (n,) or (B, n); returns (..., n + max_new_tokens), and with
    return_logits also the logits that chose each new token, (..., max_new_tokens, vocab).

    Notebook 10.
    """
    return generate(model, ids, max_new_tokens, top_k=1, return_logits=return_logits)


def generate_with_cache(
    model: GPT1, ids: torch.Tensor, max_new_tokens: int, *, return_logits: bool = False
):
    """Greedy generation with a KVCache, the prompt run once and then one token per step:
    generate(..., top_k=1, cache=True). Same arguments and results as
    `generate_without_cache`.

    Notebook 10.
    """
    return generate(model, ids, max_new_tokens, top_k=1, cache=True, return_logits=return_logits)


def check_cache_agrees(
    model: GPT1, ids: torch.Tensor, max_new_tokens: int, *, atol: float = 1e-4
) -> torch.Tensor:
    """Generate both ways; print and assert that the tokens are identical and the logits
    agree within atol (different matrix shapes round differently, so not bit for bit).

    Returns the generated tokens.

    Notebook 10.
    """
    slow, slow_logits = generate_without_cache(model, ids, max_new_tokens, return_logits=True)
    fast, fast_logits = generate_with_cache(model, ids, max_new_tokens, return_logits=True)
    error = float((slow_logits - fast_logits).abs().max())
    same = torch.equal(slow, fast)
    ok = same and error <= atol
    if same:
        line = tr(
            "{status} cached vs recomputed generation: the same {n} new tokens; logits max "
            "error {error:.1e} (tolerance {atol:.0e})",
            status=status(ok), n=max_new_tokens, error=error, atol=atol,
        )  # fmt: skip
    else:
        line = tr(
            "{status} cached vs recomputed generation: DIFFERENT {n} new tokens; logits max "
            "error {error:.1e} (tolerance {atol:.0e})",
            status=status(ok), n=max_new_tokens, error=error, atol=atol,
        )  # fmt: skip
    print(line)
    if not same:
        differs = (slow != fast).reshape(-1, slow.shape[-1]).any(dim=0).nonzero()
        raise AssertionError(
            tr("cached and recomputed generation differ, first at position {position}",
               position=int(differs[0]))
        )  # fmt: skip
    if not error <= atol:
        raise AssertionError(
            tr("cached vs recomputed logits: max error {error:.3e} exceeds the tolerance "
               "{atol:.0e}", error=error, atol=atol)
        )  # fmt: skip
    return fast
