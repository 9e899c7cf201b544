"""Training a small GPT-1-style model on the grammar's sentences, measured against the truth.

Because the grammar's next-token distributions are known exactly, two measures need no
estimate of the truth:

* KL(true ‖ model), averaged over every predicted position of held-out sentences: 0 only when
  the model's distribution is the true one at each of those prefixes;
* the held-out loss (mean cross-entropy per predicted token) minus the entropy rate: the
  floor. The loss of a model equals entropy + KL on average, so the gap is the KL again,
  up to the sampling noise of the held-out sentences.

The KL is also kept per grammar rule (the rule that produced each position's next token:
the subject, the verb, ...), which says *which* predictions a model has learned. Copies of
the weights at chosen steps let a notebook sample sentences from the model as it was then.
The course's trained model (notebook 08's recipe, `scripts/save_course_model.py`) is stored
in nbhelpers/data/ for notebook 09, which must not depend on notebook 08 having run.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F

from .corpus import JapaneseGrammar
from .corpus.grammar import RULES
from .gpt1 import GPT1, GPT1Config, check_gpt1, evaluating
from .inference import generate
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
    # (B, L-1) int64: the index in RULES of the rule that produced each position's next
    # token, -1 where nothing is predicted; None: no KL per rule
    rules: torch.Tensor | None = None

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
    rules = grammar.next_token_rules(ids).masked_fill(~mask, -1)
    return HeldOut(ids, probs.float(), mask, true_loss, rules)


def evaluate(model: GPT1, heldout: HeldOut, chunk: int = 250) -> tuple[float, float]:
    """(mean KL(true ‖ model), mean cross-entropy) per predicted held-out token, in nats.

    The sentences go through the model `chunk` at a time: all 2,000 at once would hold
    every layer's activations for all of them, a few hundred MB that a hub serving a class
    cannot spare.

    Notebook 08.
    """
    kl, loss, _ = _measure(model, heldout, chunk)
    return kl, loss


def evaluate_by_rule(model: GPT1, heldout: HeldOut, chunk: int = 250) -> dict[str, float]:
    """{rule: mean KL(true ‖ model)} over the held-out positions whose next token that rule
    of the grammar produced (`RULES`: the subject, the verb, <EOS> as "end", ...), in nats.

    Notebook 08.
    """
    if heldout.rules is None:
        raise ValueError("heldout.rules is None: make the held-out set with make_heldout")
    return _measure(model, heldout, chunk)[2]


def _measure(model: GPT1, heldout: HeldOut, chunk: int) -> tuple[float, float, dict]:
    """The mean KL, the mean loss, and {rule: mean KL} ({} without heldout.rules), in one
    pass over the held-out sentences, `chunk` at a time."""
    check_positive_int("chunk", chunk)
    device = model.device
    kl_sum = loss_sum = 0.0
    by_rule = torch.zeros(len(RULES), dtype=torch.float64, device=device)
    counts = torch.zeros(len(RULES), dtype=torch.float64, device=device)
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
            if heldout.rules is not None:
                rules = heldout.rules[start : start + chunk].to(device)
                kept = mask & (rules >= 0)
                by_rule.index_add_(0, rules[kept], kl[kept].double())
                counts.index_add_(0, rules[kept], torch.ones_like(kl[kept], dtype=torch.float64))
    tokens = heldout.predicted_tokens
    rule_kl = {}
    if heldout.rules is not None:
        means = (by_rule / counts).tolist()  # NaN for a rule that never occurs
        rule_kl = dict(zip(RULES, means, strict=True))
    return kl_sum / tokens, loss_sum / tokens, rule_kl


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
            raise ValueError(f"step must be one of the evaluated steps {self.steps}, got {step!r}")
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
    checkpoints: Sequence[int] = (),
) -> TrainingHistory:
    """Train `model` in place with AdamW on fresh sentences from the grammar every step, and
    measure it on `heldout` (2,000 sentences by default) every `eval_every` steps: the mean
    KL, the loss, and the KL per grammar rule.

    `checkpoints` lists steps after which a CPU copy of the weights is kept in
    `history.checkpoints` (0: the initial weights), to sample from the model as it was then;
    a copy of this model's 54,000 numbers takes well under a millisecond.

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
    _check_cpu_threads(cpu_threads)
    if isinstance(checkpoints, (str, bytes)) or not isinstance(checkpoints, Sequence):
        raise TypeError(f"checkpoints must be a sequence of steps, got {checkpoints!r}")
    for step in checkpoints:
        if not is_int(step) or not 0 <= step <= steps:
            raise ValueError(f"checkpoints must be ints from 0 to steps={steps}, got {step!r}")
    heldout = heldout if heldout is not None else make_heldout(grammar)
    settings = (steps, batch_size, lr, warmup, eval_every, seed, progress, set(checkpoints))
    with threads_for_cpu(cpu_threads if model.device.type == "cpu" else None):
        return _train(model, grammar, heldout, *settings)


def _check_cpu_threads(cpu_threads) -> None:
    if cpu_threads is not None and (not is_int(cpu_threads) or cpu_threads < 1):
        raise ValueError(f"cpu_threads must be a positive int or None, got {cpu_threads!r}")


def _cpu_copy(model: GPT1) -> dict[str, torch.Tensor]:
    return {name: t.detach().to("cpu", copy=True) for name, t in model.state_dict().items()}


def _train(
    model, grammar, heldout, steps, batch_size, lr, warmup, eval_every, seed, progress, keep
):
    history = TrainingHistory(grammar.entropy_rate(), heldout.true_loss)
    if 0 in keep:
        history.checkpoints[0] = _cpu_copy(model)
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
        if step in keep:
            history.checkpoints[step] = _cpu_copy(model)
        if step % eval_every == 0 or step == steps:
            kl, heldout_loss, rule_kl = _measure(model, heldout, chunk=250)
            history.steps.append(step)
            history.seconds.append(elapsed)
            history.kl.append(kl)
            history.heldout_loss.append(heldout_loss)
            history.train_loss.append(float(np.mean(losses)))
            for rule, value in rule_kl.items():
                history.kl_by_rule.setdefault(rule, []).append(value)
            losses = []
            line.update(step)  # no numbers that vary by machine: the notebook stores this
    model.eval()
    return history


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
    the weights. `cpu_threads` as for `train`.

    Notebook 08.
    """
    check_model_fits_grammar(model, grammar)
    check_positive_int("n", n)
    _check_cpu_threads(cpu_threads)
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


# --- the course's trained model, stored for notebook 09 --------------------------------------

COURSE_MODEL_PATH = Path(__file__).resolve().parent / "data" / "course_model.pt"


def save_course_model(model: GPT1, path: str | Path = COURSE_MODEL_PATH, **details) -> Path:
    """Store `model`'s configuration and weights (and `details`: plain numbers and strings
    such as the recipe) in a file that `torch.load(..., weights_only=True)` reads."""
    check_gpt1(model)
    for name, value in details.items():
        if type(value) not in (int, float, str, bool):  # what weights_only=True reads back
            raise TypeError(f"{name} must be a plain int, float, str or bool, got {value!r}")
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    saved = {"config": asdict(model.config), "state_dict": _cpu_copy(model), "details": details}
    torch.save(saved, path)
    return path


def load_course_model(
    device: str | torch.device = "cpu", path: str | Path = COURSE_MODEL_PATH
) -> GPT1:
    """Notebook 08's trained model, stored by `scripts/save_course_model.py`, in eval mode on
    `device`. Loaded with weights_only=True: the file can hold tensors and plain values
    only, never code to run. `course_model_details()` gives the recipe it was trained with.

    Notebook 09.
    """
    saved = _read_course_model(path)
    model = GPT1(GPT1Config(**saved["config"]))
    model.load_state_dict(saved["state_dict"])
    return model.to(device).eval()


def course_model_details(path: str | Path = COURSE_MODEL_PATH) -> dict:
    """What the stored model's file says about its training: the recipe, its held-out KL."""
    return dict(_read_course_model(path)["details"])


def _read_course_model(path: str | Path) -> dict:
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(
            f"no course model at {path}: run `python scripts/save_course_model.py` to train "
            "and store it"
        )
    return torch.load(path, map_location="cpu", weights_only=True)
