"""Training a small GPT-1-style model on the grammar's sentences, measured against the truth.

Because the grammar's next-token distributions are known exactly, two measures need no
estimate of the truth:

* KL(true ‖ model), averaged over every predicted position of held-out sentences: 0 only when
  the model's distribution is the true one at each of those prefixes;
* the held-out loss (mean cross-entropy per predicted token) minus the entropy rate: the
  floor. The loss of a model equals entropy + KL on average, so the gap is the KL again,
  up to the sampling noise of the held-out sentences.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np
import torch
import torch.nn.functional as F

from .corpus import JapaneseGrammar
from .gpt1 import GPT1, GPT1Config, check_gpt1, evaluating
from .statistics import kl_divergence
from .support.benchmarking import cpu_threads as threads_for_cpu
from .support.progress import ProgressLine
from .support.validation import check_positive_int, is_int


def corpus_model_config(grammar: JapaneseGrammar, **overrides) -> GPT1Config:
    """A small GPT-1-style configuration that fits the grammar: one post-LN block of
    d = 64 with 4 heads and a 256-wide feed-forward layer, and a context that holds the
    longest sentence. One block suffices here (the verb's position can attend straight to
    the subject and the place) and trains in seconds on a CPU.

    Notebook 08.
    """
    settings = dict(
        vocab_size=grammar.tokenizer.vocab_size,
        n_ctx=grammar.max_length,
        d_model=64,
        n_layers=1,
        n_heads=4,
    )
    settings.update(overrides)
    return GPT1Config(**settings)


def check_model_fits_grammar(model: GPT1, grammar: JapaneseGrammar) -> None:
    """A GPT1 and a JapaneseGrammar whose tokenizer has the model's vocabulary size."""
    check_gpt1(model)
    if not isinstance(grammar, JapaneseGrammar):
        raise TypeError(f"grammar must be a JapaneseGrammar, got {type(grammar).__name__}")
    if model.config.vocab_size != grammar.tokenizer.vocab_size:
        raise ValueError(
            f"model.config.vocab_size={model.config.vocab_size} does not match the grammar's "
            f"vocabulary of {grammar.tokenizer.vocab_size} tokens"
        )


@dataclass
class HeldOut:
    """Held-out sentences with their exact next-token distributions at every position."""

    ids: torch.Tensor  # (B, L): <SOS> ... <EOS> <PAD> ...
    true_probs: torch.Tensor  # (B, L-1, vocab), float32
    mask: torch.Tensor  # (B, L-1) bool: the predicted positions (target is not <PAD>)
    true_loss: float  # the true model's mean -log P per predicted token on these sentences

    @property
    def predicted_tokens(self) -> int:
        return int(self.mask.sum())


def make_heldout(grammar: JapaneseGrammar, n: int = 2000, seed: int = 12345) -> HeldOut:
    """n sampled sentences with the grammar's exact next-token distributions at every
    position, to measure a model against the truth.

    Notebook 08.
    """
    ids = grammar.sample_ids(n, seed)
    probs, mask = grammar.true_distributions(ids)
    target_probs = probs.gather(-1, ids[:, 1:].unsqueeze(-1)).squeeze(-1)
    true_loss = float(-torch.log(target_probs[mask]).mean())
    return HeldOut(ids, probs.float(), mask, true_loss)


def evaluate(model: GPT1, heldout: HeldOut, chunk: int = 250) -> tuple[float, float]:
    """(mean KL(true ‖ model), mean cross-entropy) per predicted held-out token, in nats.

    The sentences go through the model `chunk` at a time: all 2,000 at once would hold
    every layer's activations for all of them, a few hundred MB that a hub serving a class
    cannot spare.

    Notebook 08.
    """
    device = model.device
    kl_sum = loss_sum = 0.0
    with evaluating(model):
        for start in range(0, len(heldout.ids), chunk):
            ids = heldout.ids[start : start + chunk].to(device)
            p = heldout.true_probs[start : start + chunk].to(device)
            mask = heldout.mask[start : start + chunk].to(device)
            log_q = F.log_softmax(model(ids[:, :-1]).float(), dim=-1)
            kl = kl_divergence(p, log_q.double().exp())  # float64: no underflow to 0
            loss = -log_q.gather(-1, ids[:, 1:].unsqueeze(-1)).squeeze(-1)
            kl_sum += float(kl[mask].double().sum())
            loss_sum += float(loss[mask].double().sum())
    tokens = heldout.predicted_tokens
    return kl_sum / tokens, loss_sum / tokens


@dataclass
class TrainingHistory:
    """What `train` measured: one entry per evaluation."""

    entropy_rate: float
    heldout_true_loss: float
    steps: list[int] = field(default_factory=list)
    seconds: list[float] = field(default_factory=list)  # training time so far, evaluation excluded
    kl: list[float] = field(default_factory=list)
    heldout_loss: list[float] = field(default_factory=list)
    train_loss: list[float] = field(default_factory=list)  # mean over the steps since the last

    def first_below(self, kl_target: float) -> tuple[int, float] | None:
        """(step, seconds) of the first evaluation with KL <= kl_target, or None."""
        for step, seconds, kl in zip(self.steps, self.seconds, self.kl, strict=True):
            if kl <= kl_target:
                return step, seconds
        return None

    def __repr__(self) -> str:
        return f"TrainingHistory({len(self.steps)} evaluations)"


def learning_rate(step: int, steps: int, peak: float, warmup: int) -> float:
    """Linear warm-up (post-LN transformers need it), then a cosine decay to peak / 20.

    Notebook 08.
    """
    if step < warmup:
        return peak * (step + 1) / warmup
    progress = (step - warmup) / max(1, steps - warmup)
    return peak * (0.05 + 0.95 * 0.5 * (1 + np.cos(np.pi * progress)))


def train(
    model: GPT1,
    grammar: JapaneseGrammar,
    *,
    steps: int = 800,
    batch_size: int = 256,
    lr: float = 1e-2,
    warmup: int = 100,
    eval_every: int = 40,
    heldout: HeldOut | None = None,
    seed: int = 0,
    progress: bool = True,
    cpu_threads: int | None = 1,
) -> TrainingHistory:
    """Train `model` in place with AdamW on fresh sentences from the grammar every step, and
    measure it on `heldout` (2,000 sentences by default) every `eval_every` steps.

    The batches come from a NumPy generator seeded with `seed` and the model's own device is
    used throughout, so on the CPU a run is reproducible given the model's initial weights.
    `cpu_threads` sets torch's CPU threads while training (restored afterwards; None keeps
    them): a model this small gains nothing from more, and on a shared CPU threads that wait
    for each other can slow a step down many times over.

    Notebook 08.
    """
    check_model_fits_grammar(model, grammar)
    if model.config.n_ctx < grammar.max_length - 1:
        raise ValueError(
            f"model.config.n_ctx={model.config.n_ctx} is too short: sentences need "
            f"{grammar.max_length - 1} positions"
        )
    for name, value in (("steps", steps), ("batch_size", batch_size), ("eval_every", eval_every)):
        check_positive_int(name, value)
    if cpu_threads is not None and (not is_int(cpu_threads) or cpu_threads < 1):
        raise ValueError(f"cpu_threads must be a positive int or None, got {cpu_threads!r}")
    heldout = heldout if heldout is not None else make_heldout(grammar)
    with threads_for_cpu(cpu_threads if model.device.type == "cpu" else None):
        return _train(
            model, grammar, heldout, steps, batch_size, lr, warmup, eval_every, seed, progress
        )


def _train(model, grammar, heldout, steps, batch_size, lr, warmup, eval_every, seed, progress):
    history = TrainingHistory(grammar.entropy_rate(), heldout.true_loss)
    rng = np.random.default_rng(seed)
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.0)
    pad_id, device = grammar.tokenizer.pad_id, model.device
    model.train()
    elapsed, losses = 0.0, []
    line = ProgressLine("training", steps, enabled=progress)
    for step in range(1, steps + 1):
        start = time.perf_counter()
        ids = grammar.sample_ids(batch_size, rng).to(device)
        ids = ids[:, : int((ids != pad_id).sum(1).max())]  # drop all-<PAD> columns
        for group in optimizer.param_groups:
            group["lr"] = learning_rate(step - 1, steps, lr, warmup)
        logits = model(ids[:, :-1])
        loss = F.cross_entropy(
            logits.reshape(-1, logits.shape[-1]), ids[:, 1:].reshape(-1), ignore_index=pad_id
        )
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
        elapsed += time.perf_counter() - start
        if step % eval_every == 0 or step == steps:
            kl, heldout_loss = evaluate(model, heldout)
            history.steps.append(step)
            history.seconds.append(elapsed)
            history.kl.append(kl)
            history.heldout_loss.append(heldout_loss)
            history.train_loss.append(float(np.mean(losses)))
            losses = []
            line.update(step)  # no numbers that vary by machine: the notebook stores this
    model.eval()
    return history
