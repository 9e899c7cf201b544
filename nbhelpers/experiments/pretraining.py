"""Pre-training a small GPT-1-style model on the grammar's sentences: the loop of notebook 08.

One step is the language-modelling objective of GPT-1's §3.1 on a batch: position t predicts
token t + 1, the loss is the mean cross-entropy -L1 / N over the predicted (non-<PAD>)
tokens, then backward and one optimiser step (`train_step`, which notebook 08 writes out).
`train` repeats it on fresh sentences every step and measures the model against the truth
every `eval_every` steps (experiments/heldout.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import torch
import torch.nn.functional as F

from ..corpus import JapaneseGrammar
from ..gpt1 import GPT1, GPT1Config
from ..support.language import tr
from ..support.progress import ProgressLine
from ..support.threads import cpu_threads as threads_for_cpu
from ..support.validation import (
    check_positive_int,
    check_positive_number,
    check_seed,
    checked,
    is_int,
)
from . import training_loop
from .heldout import HeldOut, check_model_fits_grammar, make_heldout, measure
from .training_loop import adam, descend


def corpus_model_config(grammar: JapaneseGrammar, **overrides) -> GPT1Config:
    """A small GPT-1-style configuration that fits the grammar: one post-LN block of
    d = 64 with 4 heads and a 256-wide feed-forward layer, and a context that holds the
    longest sentence.

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


@dataclass(frozen=True)
class TrainingSettings:
    """The recipe of a run: how many steps, how big a batch, the learning-rate schedule, how
    often to measure, the data seed, and the steps after which to keep a copy of the weights
    (0: before training)."""

    steps: int = 800
    batch_size: int = 256
    lr: float = 1e-2
    warmup: int = 100
    eval_every: int = 40
    seed: int = 0
    checkpoints: tuple[int, ...] = ()

    def __post_init__(self):
        for name in ("steps", "batch_size", "eval_every"):
            check_positive_int(name, getattr(self, name))
        if not is_int(self.warmup) or self.warmup < 0:
            raise ValueError(
                tr(
                    "warmup must be an int >= 0, got {warmup!r}",
                    warmup=self.warmup,
                )
            )
        check_positive_number("lr", self.lr)
        check_seed("seed", self.seed)
        checkpoints = self.checkpoints
        if isinstance(checkpoints, (str, bytes)) or not isinstance(checkpoints, Sequence):
            raise TypeError(
                tr(
                    "checkpoints must be a sequence of steps, got {checkpoints!r}",
                    checkpoints=checkpoints,
                )
            )
        for step in checkpoints:
            if not is_int(step) or not 0 <= step <= self.steps:
                raise ValueError(
                    tr(
                        "checkpoints must be ints from 0 to steps={steps}, got {step!r}",
                        steps=self.steps,
                        step=step,
                    )
                )
        object.__setattr__(self, "checkpoints", tuple(int(step) for step in checkpoints))


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
    # {rule: [mean KL at each evaluation]}, the rules of the grammar (RULES) in their order
    kl_by_rule: dict[str, list[float]] = field(default_factory=dict)
    # {step: a CPU copy of the model's state_dict after that step}; 0: before training
    checkpoints: dict[int, dict[str, torch.Tensor]] = field(default_factory=dict)

    def rule_kl_at(self, step: int) -> dict[str, float]:
        """{rule: mean KL} at the evaluation after `step`."""
        if step not in self.steps:
            raise ValueError(
                tr(
                    "step must be one of the evaluated steps {steps}, got {step!r}",
                    steps=self.steps,
                    step=step,
                )
            )
        i = self.steps.index(step)
        return {rule: values[i] for rule, values in self.kl_by_rule.items()}

    def first_below(self, kl_target: float) -> tuple[int, float] | None:
        """(step, seconds) of the first evaluation with KL <= kl_target, or None."""
        for step, seconds, kl in zip(self.steps, self.seconds, self.kl, strict=True):
            if kl <= kl_target:
                return step, seconds
        return None

    def __repr__(self) -> str:
        return f"TrainingHistory({len(self.steps)} evaluations)"


def learning_rate(step: int, steps: int, peak: float, warmup: int) -> float:
    """Linear warm-up, then a cosine decay to peak / 20.

    Deep post-LN transformers such as GPT-1 need the warm-up: at initialisation the gradients
    of the weights near the output are large (Xiong et al. 2020, "On Layer Normalization in
    the Transformer Architecture", §3). Notebook 08 measures what it does for one block.

    Notebook 08.
    """
    if step < warmup:
        return peak * (step + 1) / warmup
    progress = (step - warmup) / max(1, steps - warmup)
    return peak * (0.05 + 0.95 * 0.5 * (1 + np.cos(np.pi * progress)))


def train_step(model: GPT1, optimizer: torch.optim.Optimizer, ids: torch.Tensor, pad_id: int):
    """One step on a batch of sentences ids (B, n): position t predicts token t + 1, the loss
    is the mean cross-entropy over the targets that are not <PAD> (that is -L1 / N), then
    backward and one optimiser step. Returns the loss.

    Notebook 08 writes this loop out.
    """
    logits = model(ids[:, :-1])  # (B, n-1, n_vocab): position t predicts token t + 1
    loss = F.cross_entropy(
        logits.flatten(0, 1), ids[:, 1:].flatten(), ignore_index=pad_id
    )  # (B·(n-1), n_vocab) against (B·(n-1),)
    return descend(optimizer, loss)


def train(
    model: GPT1,
    grammar: JapaneseGrammar,
    *,
    heldout: HeldOut | None = None,
    progress: bool = True,
    cpu_threads: int | None = 1,
    **settings,
) -> TrainingHistory:
    """Train `model` in place with Adam on fresh sentences from the grammar every step, and
    measure it on `heldout` (2,000 sentences by default) every `eval_every` steps: the mean
    KL, the loss, and the KL per grammar rule. `settings` are those of TrainingSettings
    (steps=800, batch_size=256, lr=1e-2, warmup=100, eval_every=40, seed=0, checkpoints=()).

    `checkpoints` lists steps after which a CPU copy of the weights is kept in
    `history.checkpoints` (0: the initial weights), to sample from the model as it was then.

    The batches come from a NumPy generator seeded with `seed` and the model's own device is
    used throughout, so on one CPU a run is reproducible given the model's initial weights.
    Another CPU rounds the last bits differently, and 800 steps amplify that into different
    digits: the course quotes its stored run (experiments/course_model.py).
    `cpu_threads` sets torch's CPU threads while training (restored afterwards; None keeps
    them).

    Notebook 08.
    """
    check_model_fits_grammar(model, grammar)
    if model.config.n_ctx < grammar.max_length - 1:
        raise ValueError(
            tr(
                "model.config.n_ctx={n_ctx} is too short: sentences need {needed} positions",
                n_ctx=model.config.n_ctx,
                needed=grammar.max_length - 1,
            )
        )
    recipe = TrainingSettings(**settings)
    heldout = heldout if heldout is not None else make_heldout(grammar)
    with threads_for_cpu(cpu_threads if model.device.type == "cpu" else None):
        return _train(model, grammar, heldout, recipe, progress)


def sentence_batches(grammar: JapaneseGrammar, batch_size: int, steps: int, rng, device=None):
    """`steps` batches of fresh sentences (B, n) from the grammar, each without the columns
    that are <PAD> in every row."""
    pad_id = grammar.tokenizer.pad_id
    for _ in range(steps):
        ids = grammar.sample_ids(batch_size, rng).to(device)
        yield ids[:, : int((ids != pad_id).sum(1).max())]


def cpu_copy(model: GPT1) -> dict[str, torch.Tensor]:
    return {name: t.detach().to("cpu", copy=True) for name, t in model.state_dict().items()}


def _train(
    model: GPT1, grammar: JapaneseGrammar, heldout: HeldOut, recipe: TrainingSettings, progress
) -> TrainingHistory:
    history = TrainingHistory(grammar.entropy_rate(), heldout.true_loss)
    keep = set(recipe.checkpoints)
    if 0 in keep:
        history.checkpoints[0] = cpu_copy(model)
    rng = np.random.default_rng(recipe.seed)
    pad_id, device = grammar.tokenizer.pad_id, model.device

    losses = []

    def after(step, loss, seconds):
        losses.append(loss)
        if step in keep:
            history.checkpoints[step] = cpu_copy(model)
        if step % recipe.eval_every == 0 or step == recipe.steps:
            result = measure(model, heldout)
            history.steps.append(step)
            history.seconds.append(seconds)
            history.kl.append(result.kl)
            history.heldout_loss.append(result.loss)
            history.train_loss.append(float(torch.stack(losses).mean()))
            for rule, value in result.kl_by_rule.items():
                history.kl_by_rule.setdefault(rule, []).append(value)
            losses.clear()
            line.update(step)  # no numbers that vary by machine: the notebook stores this

    # GPT-1 used Adam with a decoupled weight decay of 0.01 (AdamW); fresh sentences every
    # step leave nothing to overfit here, so plain Adam.
    optimizer, schedule = adam(
        model.parameters(), lambda step: learning_rate(step, recipe.steps, recipe.lr, recipe.warmup)
    )
    line = ProgressLine(tr("training"), recipe.steps, enabled=progress)
    model.train()
    with checked():  # the grammar's ids fit the model (train checked it once)
        training_loop.run(
            sentence_batches(grammar, recipe.batch_size, recipe.steps, rng, device),
            lambda ids: train_step(model, optimizer, ids, pad_id),
            schedule,
            after,
        )
    model.eval()
    return history
