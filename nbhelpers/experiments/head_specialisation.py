"""Heads that specialise: a task that needs two attention patterns at once, trained in seconds.

Sequences of random tokens x_0 .. x_{n-1}; at every position i >= 1 the model must name two
tokens, the subject x_0 and the previous token x_{i-1}:

    target_i = (x_0, x_{i-1})        (an ordered pair: swapping the two is a different answer)

The model sees the sentence only through one causal MultiHeadAttention layer (token and
learned position embeddings in, a small MLP and an output layer of 2 x n_vocab logits out, no
residual path), so whatever it names must come through the attention. A head's output is
ONE weighted average of the values per query: a single head has to split its weight
between position 0 and position i-1 and hands the MLP one blended vector. Two heads give
two averages, side by side in Concat.

Why not a sum such as (2 x_0 + x_{i-1}) mod n_vocab? One head solves that with a blend, which is
itself a weighted sum: trained the same way (n_vocab = 8, d_model = 8 or 16, 1000 steps), h = 1
reached accuracy 1.00 on 11 of 12 seeds, with about 0.66 of its weight on x_0 and 0.32 on
x_{i-1}, the 2 : 1 of the formula. Naming both tokens is what a blend cannot do
cheaply: with n_vocab = 64 tokens in d_model = 8 features and the same training budget, one head
learns one of the two jobs and misses the other, while two heads each take one (see
train_heads).

Notebook 05.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import NamedTuple

import torch
import torch.nn.functional as F
from torch import nn

from ..multihead import MultiHeadAttention, check_divisible
from ..support.language import tr
from ..support.threads import check_cpu_threads
from ..support.threads import cpu_threads as threads_for_cpu
from ..support.validation import (
    check_positive_int,
    check_positive_number,
    check_seed,
    is_int,
)
from . import training_loop
from .training_loop import adam, descend

# The held-out sequences come from their own stream, the same for every model and seed, so
# that h = 1 and h = 2 are scored on the same sentences.
EVAL_SEED = 12345


def subject_previous_batch(
    batch_size: int, n: int, vocab_size: int, generator: torch.Generator | None = None
) -> tuple[torch.Tensor, torch.Tensor]:
    """(tokens (B, n), targets (B, n - 1, 2)): uniform random tokens, and for each position
    i = 1 .. n-1 the pair (x_0, x_{i-1}), the subject first.

    Notebook 05.
    """
    check_positive_int("batch_size", batch_size)
    check_positive_int("vocab_size", vocab_size)
    if not is_int(n) or n < 3:
        raise ValueError(
            tr(
                "n must be an int >= 3 (position 2 is the first whose previous token is not the "
                "subject), got {n!r}",
                n=n,
            )
        )
    if generator is not None and not isinstance(generator, torch.Generator):
        raise TypeError(
            tr(
                "generator must be a torch.Generator or None, got {generator_type}",
                generator_type=type(generator),
            )
        )
    tokens = torch.randint(0, vocab_size, (batch_size, n), generator=generator)
    subject = tokens[:, :1].expand(-1, n - 1)
    previous = tokens[:, :-1]
    return tokens, torch.stack([subject, previous], dim=-1)


class SubjectPreviousModel(nn.Module):
    """Token + learned position embeddings -> causal MultiHeadAttention -> MLP -> logits,
    2 x n_vocab per position.

    forward(tokens (..., n)) gives logits (..., n, 2, n_vocab): [..., 0, :] scores the subject,
    [..., 1, :] the previous token. Changing n_heads changes how the d_model features are
    split into heads, not the number of parameters.
    """

    def __init__(self, vocab_size: int, n_ctx: int, d_model: int, n_heads: int, hidden: int = 64):
        super().__init__()
        check_positive_int("vocab_size", vocab_size)
        check_positive_int("n_ctx", n_ctx)
        check_positive_int("hidden", hidden)
        check_divisible(d_model, n_heads)
        self.vocab_size, self.n_ctx = vocab_size, n_ctx
        self.token_embedding = nn.Embedding(vocab_size, d_model)
        self.position_embedding = nn.Embedding(n_ctx, d_model)
        self.attn = MultiHeadAttention(d_model, n_heads, causal=True)
        self.mlp = nn.Sequential(nn.Linear(d_model, hidden), nn.ReLU())
        self.out = nn.Linear(hidden, 2 * vocab_size)

    @property
    def n_heads(self) -> int:
        return self.attn.n_heads

    def embed(self, tokens: torch.Tensor) -> torch.Tensor:
        """(..., n) token ids -> (..., n, d_model): token plus position embedding."""
        if not isinstance(tokens, torch.Tensor) or tokens.is_floating_point():
            raise TypeError(
                tr(
                    "tokens must be a tensor of integer token ids, got {tokens!r:.60}",
                    tokens=tokens,
                )
            )
        n = tokens.shape[-1]
        if n > self.n_ctx:
            raise ValueError(
                tr("tokens has {n} positions, the model holds n_ctx={n_ctx}", n=n, n_ctx=self.n_ctx)
            )
        if tokens.numel() and (tokens.min() < 0 or tokens.max() >= self.vocab_size):
            raise ValueError(
                tr("tokens must lie in [0, vocab_size={vocab_size})", vocab_size=self.vocab_size)
            )
        return self.token_embedding(tokens) + self.position_embedding.weight[:n]

    def forward(self, tokens: torch.Tensor, return_weights: bool = False):
        """logits (..., n, 2, n_vocab); with return_weights also the weights (..., n_h, n, n)."""
        x = self.embed(tokens)
        if return_weights:
            mixed, weights = self.attn(x, return_weights=True)
        else:
            mixed, weights = self.attn(x), None
        logits = self.out(self.mlp(mixed)).unflatten(-1, (2, self.vocab_size))
        return (logits, weights) if return_weights else logits


class Accuracy(NamedTuple):
    """Shares of predicted positions (i >= 1) with both tokens right, the subject right, and
    the previous token right; the last split into i = 1, where the previous token is the
    subject, and i >= 2, where it is not."""

    both: float
    subject: float
    previous: float
    previous_at_1: float
    previous_after_1: float


def accuracy(model: SubjectPreviousModel, tokens: torch.Tensor, targets: torch.Tensor) -> Accuracy:
    """How often the model names the subject, the previous token, and both (positions i >= 1)."""
    if not isinstance(model, SubjectPreviousModel):
        raise TypeError(
            tr(
                "model must be a SubjectPreviousModel, got {model_type}",
                model_type=type(model).__name__,
            )
        )
    n = tokens.shape[-1]
    if tuple(targets.shape) != (*tokens.shape[:-1], n - 1, 2):
        raise ValueError(
            tr(
                "targets must be (..., n - 1, 2) = {expected_shape} for tokens of shape "
                "{tokens_shape}, got {targets_shape}",
                expected_shape=(*tokens.shape[:-1], n - 1, 2),
                tokens_shape=tuple(tokens.shape),
                targets_shape=tuple(targets.shape),
            )
        )
    with torch.no_grad():
        right = model(tokens)[..., 1:, :, :].argmax(-1) == targets  # (..., n - 1, 2)
    return Accuracy(
        both=right.all(-1).float().mean().item(),
        subject=right[..., 0].float().mean().item(),
        previous=right[..., 1].float().mean().item(),
        previous_at_1=right[..., 0, 1].float().mean().item(),  # position i = 1
        previous_after_1=right[..., 1:, 1].float().mean().item(),  # positions i >= 2
    )


class HeadShares(NamedTuple):
    """How much of a head's weight falls on the previous token (key j = i - 1) and on the
    first token (key j = 0), averaged over the queries i >= 2, where the two differ."""

    previous: float
    first: float

    @property
    def role(self) -> str:
        """What the head mostly attends to: 'previous token' or 'first token'."""
        return "previous token" if self.previous >= self.first else "first token"


def head_shares(weights: torch.Tensor) -> list[HeadShares]:
    """Per head, the mean weight on key i-1 and on key 0 over queries i >= 2 (and any
    leading batch axes) of attention weights (..., n_h, n, n), e.g. MultiHeadAttention's.

    Notebook 05.
    """
    if not isinstance(weights, torch.Tensor) or not weights.is_floating_point():
        raise TypeError(
            tr(
                "weights must be a floating-point torch.Tensor (..., n_h, n, n), got {got_type}",
                got_type=type(weights).__name__,
            )
            + (
                tr(" of dtype {dtype}", dtype=weights.dtype)
                if isinstance(weights, torch.Tensor)
                else ""
            )
        )
    if weights.dim() < 3 or weights.shape[-1] != weights.shape[-2]:
        raise ValueError(
            tr(
                "weights must be (..., n_h, n, n), one square matrix per head, got shape "
                "{weights_shape}",
                weights_shape=tuple(weights.shape),
            )
        )
    n = weights.shape[-1]
    if n < 3:
        raise ValueError(
            tr(
                "weights must cover n >= 3 positions (from query 2 on, the previous token is not "
                "the first), got n={n}",
                n=n,
            )
        )
    sums = weights.sum(-1)
    if (weights < 0).any() or not torch.allclose(sums, torch.ones_like(sums), atol=1e-4):
        raise ValueError(
            tr(
                "weights must be attention weights: non-negative, each row summing to 1 (scores "
                "before the softmax will not do)"
            )
        )
    per_head = weights.detach().reshape(-1, *weights.shape[-3:]).mean(0)  # (h, n, n)
    queries = torch.arange(2, n)
    previous = per_head[:, queries, queries - 1].mean(-1)
    first = per_head[:, queries, 0].mean(-1)
    return [HeadShares(float(p), float(f)) for p, f in zip(previous, first, strict=True)]


@dataclass(frozen=True)
class HeadsTask:
    """The sizes and the training recipe of train_heads, checked once."""

    steps: int = 300
    vocab_size: int = 64
    n: int = 8
    d_model: int = 8
    hidden: int = 64
    batch_size: int = 128
    lr: float = 1e-2
    eval_size: int = 1000
    every: int = 25

    def __post_init__(self):
        for name in ("steps", "eval_size", "every"):
            check_positive_int(name, getattr(self, name))
        check_positive_number("lr", self.lr)


@dataclass
class HeadsResult:
    """What train_heads gives back: the trained model, its accuracy on held-out sequences,
    the mean attention weights per head over them, and the accuracy along the way."""

    model: SubjectPreviousModel
    accuracy: Accuracy
    weights: torch.Tensor  # (h, n, n), mean over the held-out sequences
    seconds: float  # wall-clock time of train_heads
    steps: int
    history_steps: list[int] = field(default_factory=list)
    history_accuracy: list[float] = field(default_factory=list)  # both tokens right

    @property
    def n_heads(self) -> int:
        return self.model.n_heads

    @property
    def shares(self) -> list[HeadShares]:
        return head_shares(self.weights)

    def __repr__(self) -> str:
        return (
            f"HeadsResult(h={self.n_heads}, accuracy={self.accuracy.both:.3f}, steps={self.steps})"
        )


def train_heads(
    n_heads: int,
    *,
    seed: int = 0,
    steps: int = 300,
    vocab_size: int = 64,
    n: int = 8,
    d_model: int = 8,
    hidden: int = 64,
    batch_size: int = 128,
    lr: float = 1e-2,
    eval_size: int = 1000,
    every: int = 25,
    cpu_threads: int | None = 1,
) -> HeadsResult:
    """Train a SubjectPreviousModel with n_heads heads on fresh random batches, with Adam,
    on the CPU; seeded, and the caller's torch RNG is left as it was.

    `cpu_threads` sets torch's CPU threads while training (restored afterwards; None keeps
    them): a model this small gains nothing from a second thread, and on a busy CPU threads
    that wait for each other slow every step down many times over.

    The defaults take one or two seconds per model on a laptop CPU. Measured with them over
    seeds 0-23: h = 2 names both tokens at >= 0.999 of the held-out positions, and its two
    heads split the jobs, each with >= 0.99 of its weight on one of the two keys (<= 0.003 on
    the other); h = 1 learns one job, the subject on most seeds (the previous token on 3 of
    the 24), and names both tokens at only 0.16-0.27 of the positions.

    Notebook 05.
    """
    check_positive_int("n_heads", n_heads)
    check_cpu_threads(cpu_threads)
    task = HeadsTask(steps, vocab_size, n, d_model, hidden, batch_size, lr, eval_size, every)
    check_seed("seed", seed)
    with threads_for_cpu(cpu_threads):
        return _train(n_heads, seed, task)


def _train(n_heads: int, seed: int, task: HeadsTask) -> HeadsResult:
    start = time.perf_counter()
    eval_tokens, eval_targets = subject_previous_batch(
        task.eval_size, task.n, task.vocab_size, torch.Generator().manual_seed(EVAL_SEED)
    )
    data = torch.Generator().manual_seed(seed)
    with torch.random.fork_rng(devices=[]):  # the notebook's own RNG stream stays untouched
        torch.manual_seed(seed)
        model = SubjectPreviousModel(task.vocab_size, task.n, task.d_model, n_heads, task.hidden)
    optimizer, schedule = adam(model.parameters(), lambda step: task.lr)
    history_steps, history_accuracy = [0], [accuracy(model, eval_tokens, eval_targets).both]

    def update(batch):
        tokens, targets = batch
        logits = model(tokens)[:, 1:]  # position 0 has no previous token: no target
        loss = F.cross_entropy(logits.reshape(-1, task.vocab_size), targets.reshape(-1))
        return descend(optimizer, loss)

    def after(step, loss, seconds):
        if step % task.every == 0 or step == task.steps:
            history_steps.append(step)
            history_accuracy.append(accuracy(model, eval_tokens, eval_targets).both)

    batches = (
        subject_previous_batch(task.batch_size, task.n, task.vocab_size, data)
        for _ in range(task.steps)
    )
    training_loop.run(batches, update, schedule, after)
    model.eval()
    with torch.no_grad():
        _, weights = model(eval_tokens, return_weights=True)
    return HeadsResult(
        model=model,
        accuracy=accuracy(model, eval_tokens, eval_targets),
        weights=weights.mean(0),
        seconds=time.perf_counter() - start,  # all of it, the progress checks included
        steps=task.steps,
        history_steps=history_steps,
        history_accuracy=history_accuracy,
    )
