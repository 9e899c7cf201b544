"""Fine-tuning the course model on the grammar's labelled tasks, and GPT-1's claims about it
measured in miniature (notebook 11).

`fine_tune` runs one fine-tuning from one of three starts: the pre-trained course model with
all its blocks (`layers=1`, it has one), its embeddings W_e and W_p only (`layers=0`), or
nothing pre-trained (`layers=None`, GPT-1's "no pre-training" row of Table 5). It trains
every weight with Adam on the loss of L3 = L2 + λ·L1 (`lam=0` drops the auxiliary
language-model term, Table 5's "no aux LM") and reports the accuracy on a held-out test set.

`measure_curves` repeats it over labelled-set sizes, starts, λ and seeds; the course stores
the result (`scripts/save_fine_tuning_curves.py`) in nbhelpers/data/fine_tuning_curves.json,
which the notebook plots.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

import torch

from ..corpus import JapaneseGrammar
from ..corpus.tasks import TASKS, LabelledExample, make_task
from ..corpus.tokenizer import SPECIALS, Tokenizer
from ..fine_tuning import (
    START,
    TASK_TOKENS,
    GPT1Classifier,
    classification_input,
    entailment_input,
    fine_tuning_loss,
    multiple_choice_inputs,
    similarity_inputs,
)
from ..gpt1 import GPT1, evaluating
from ..support.language import tr
from ..support.threads import cpu_threads as threads_for_cpu
from ..support.validation import (
    check_positive_int,
    check_positive_number,
    check_probability,
    check_seed,
    checked,
    is_int,
    is_number,
)
from . import training_loop
from .course_model import COURSE_MODEL_PATH, DEEP_MODEL_PATH, load_course_model
from .training_loop import adam, descend

CURVES_PATH = Path(__file__).resolve().parent.parent / "data" / "fine_tuning_curves.json"
TEST = dict(n=2000, seed=10_000)  # the test set of every run: never trained on
POOL_SEED_OFFSET = 1_000  # training examples come from seed + this, test examples excluded


SCHEDULES = ("constant", "warm-up, linear decay")
LM_ON = ("all", "grammatical")  # which examples' tokens L1 sums over
MODELS = ("course", "deep")  # the pre-trained model: notebook 08's (1 block) or 4 blocks
MODEL_PATHS = {"course": COURSE_MODEL_PATH, "deep": DEEP_MODEL_PATH}


@dataclass(frozen=True)
class FineTuningSettings:
    """One fine-tuning run: the task, how many labelled examples, which pre-trained model and
    how much of it is transferred (`layers`: how many of its blocks, 0 for the embeddings
    only, None for nothing pre-trained), λ, and the optimiser's recipe.

    The course's recipe (the defaults) is a fixed number of steps at a constant learning rate.
    GPT-1's (PAPER_RECIPE) counts `epochs` over the labelled set, warms the rate up linearly
    over `warmup` (a fraction of training) and decays it linearly to 0, puts dropout on the
    classifier and gives the start token a new row (`new_start`). `lm_on="grammatical"` keeps
    L1 to the label-1 sentences of grammaticality. `eval_every` records the test accuracy
    every that many steps (FineTuningResult.curve)."""

    task: str = "grammaticality"
    n_labelled: int = 256
    layers: int | None = 1
    lam: float = 0.5
    steps: int = 300
    batch_size: int = 32
    lr: float = 1e-3
    seed: int = 0
    model: str = "course"
    embeddings: str | None = None  # whose W_e and W_p are transferred; None: the model's own
    epochs: int | None = None  # if set, replaces steps: every example once per epoch
    schedule: str = "constant"
    warmup: float = 0.0
    classifier_dropout: float = 0.0
    new_start: bool = False
    lm_on: str = "all"
    eval_every: int | None = None

    def __post_init__(self):
        if self.task not in TASKS:
            raise ValueError(
                tr(
                    "task must be one of {TASKS}, got {task!r}",
                    TASKS=TASKS,
                    task=self.task,
                )
            )
        for name in ("n_labelled", "steps", "batch_size"):
            check_positive_int(name, getattr(self, name))
        for name in ("epochs", "eval_every"):
            if getattr(self, name) is not None:
                check_positive_int(name, getattr(self, name))
        if self.layers is not None and (not is_int(self.layers) or self.layers < 0):
            raise ValueError(
                tr(
                    "layers must be None or an int >= 0, got {layers!r}",
                    layers=self.layers,
                )
            )
        if not is_number(self.lam) or self.lam < 0:
            raise ValueError(
                tr(
                    "lam (λ) must be a number >= 0, got {lam!r}",
                    lam=self.lam,
                )
            )
        check_positive_number("lr", self.lr)
        check_seed("seed", self.seed)
        check_probability("warmup", self.warmup)
        check_probability("classifier_dropout", self.classifier_dropout)
        for name, allowed in (("model", MODELS), ("schedule", SCHEDULES), ("lm_on", LM_ON)):
            if getattr(self, name) not in allowed:
                raise ValueError(
                    tr(
                        "{name} must be one of {allowed}, got {value!r}",
                        name=name,
                        allowed=allowed,
                        value=getattr(self, name),
                    )
                )
        if self.embeddings not in (None, *MODELS):
            raise ValueError(
                tr(
                    "{name} must be one of {allowed}, got {value!r}",
                    name="embeddings",
                    allowed=(None, *MODELS),
                    value=self.embeddings,
                )
            )
        if self.lm_on == "grammatical" and self.task != "grammaticality":
            raise ValueError(
                tr(
                    'lm_on="grammatical" is for the grammaticality task, got task {task!r}',
                    task=self.task,
                )
            )

    @property
    def total_steps(self) -> int:
        """The optimiser steps of the run: `steps`, or `epochs` passes over the labelled set."""
        if self.epochs is None:
            return self.steps
        return self.epochs * -(-self.n_labelled // self.batch_size)


# GPT-1 §4.1, "Fine-tuning details": learning rate 6.25e-5, batch size 32, 3 epochs, linear
# warm-up over 0.2 % of training then linear decay, dropout 0.1 on the classifier; and §3.3's
# randomly initialised start token.
PAPER_RECIPE = dict(
    lr=6.25e-5, batch_size=32, epochs=3, schedule="warm-up, linear decay", warmup=0.002,
    classifier_dropout=0.1, new_start=True,
)  # fmt: skip


@dataclass
class FineTuningResult:
    settings: FineTuningSettings
    accuracy: float  # on the TEST set
    seconds: float  # training time, evaluation excluded
    curve: list = field(default_factory=list)  # [(step, test accuracy)] every eval_every steps
    losses: list = field(default_factory=list)  # [(-L2 / B, -L1 / N)] at every step


def task_tokenizer(grammar: JapaneseGrammar | None = None, *, new_start: bool = False):
    """The grammar's tokenizer with <DELIM> and <EXTRACT> appended, and <START> after them if
    `new_start`: ids that match the rows `GPT1.add_tokens` appends to the course model's W_e."""
    grammar = grammar or JapaneseGrammar()
    words = [t for t in grammar.tokenizer.tokens if t not in SPECIALS]
    return Tokenizer([*words, *TASK_TOKENS, *([START] if new_start else [])])


def task_input(task: str, example: LabelledExample) -> list:
    """The input transformation of `task` applied to one example (fine_tuning.py): one
    sequence, or for similarity and multiple choice a list of them."""
    if task == "grammaticality":
        return classification_input(example.parts[0])
    if task == "similarity":
        return similarity_inputs(*example.parts)
    if task == "multiple choice":
        return multiple_choice_inputs(example.parts[0], example.parts[1:])
    return entailment_input(*example.parts)


def head_of(task: str) -> dict:
    """The classifier head a task needs: GPT1Classifier's n_classes and kind."""
    if task == "multiple choice":
        return {"n_classes": 1, "kind": "multiple choice"}
    return {"n_classes": 2, "kind": "similarity" if task == "similarity" else "classification"}


def encode(task: str, examples: Sequence[LabelledExample], tokenizer):
    """The examples as a right-padded batch of ids, (B, n), or (B, 2 or k, n) for the tasks
    with several sequences per example, and their labels (B,). A tokenizer that knows <START>
    (task_tokenizer(new_start=True)) gets it in place of <SOS>, as GPT-1 does."""
    labels = torch.tensor([e.label for e in examples], dtype=torch.long)
    inputs = [task_input(task, e) for e in examples]
    if isinstance(inputs[0][0], str):  # one sequence per example
        ids = tokenizer.pad([tokenizer.encode(x, sos=False) for x in inputs])
    else:
        rows = [tokenizer.encode(x, sos=False) for sequences in inputs for x in sequences]
        per_example = len(inputs[0])
        ids = tokenizer.pad(rows).unflatten(0, (len(examples), per_example))  # (B, m, n)
    if START in tokenizer.tokens:
        ids[..., 0] = tokenizer.tokens.index(START)  # every sequence begins with <SOS>
    return ids, labels


@functools.cache
def test_set(
    task: str, new_start: bool = False
) -> tuple[tuple[LabelledExample, ...], tuple[torch.Tensor, torch.Tensor]]:
    """The test set of `task` (the same for every run) and its encoding, made once: a sweep
    of fine-tuning runs evaluates on it hundreds of times."""
    test = tuple(make_task(task, **TEST))
    return test, encode(task, test, task_tokenizer(new_start=new_start))


def split(task: str, seed: int, n_pool: int = 1024):
    """(training pool, test set): the test set is the same for every seed; the pool holds
    n_pool examples of `seed` that are not in it, and a run takes its first n_labelled."""
    test, _ = test_set(task)
    seen = {e.parts for e in test}
    fresh = [e for e in make_task(task, 4 * n_pool, seed + POOL_SEED_OFFSET) if e.parts not in seen]
    return fresh[:n_pool], test


def starting_model(
    layers: int | None,
    seed: int,
    *,
    model: str = "course",
    new_start: bool = False,
    embeddings: str | None = None,
) -> tuple[GPT1, list[int]]:
    """The model fine-tuning starts from (float32, on the CPU) with <DELIM> and <EXTRACT>
    (and <START> if `new_start`) appended to W_e, and their ids. `model`: the course model
    (1 block) or the deep one (4 blocks); `embeddings` takes W_e and W_p from the other one
    instead. Whatever is not transferred is freshly initialised.
    The new rows are drawn in that order, so <DELIM> and <EXTRACT> are the same with or
    without <START>."""
    pretrained = load_course_model(path=MODEL_PATHS[model])
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        fresh = GPT1(pretrained.config)
    if layers is not None:
        if layers > len(pretrained.blocks):
            raise ValueError(
                tr(
                    "layers must be at most {blocks}, the pre-trained model's blocks",
                    blocks=len(pretrained.blocks),
                )
            )
        keep = ("W_e.", "W_p", *(f"blocks.{i}." for i in range(layers)))
        state = {k: v for k, v in pretrained.state_dict().items() if k.startswith(keep)}
        if embeddings not in (None, model):
            other = load_course_model(path=MODEL_PATHS[embeddings]).state_dict()
            state |= {k: v for k, v in other.items() if k.startswith(("W_e.", "W_p"))}
        fresh.load_state_dict(state, strict=False)
    count = len(TASK_TOKENS) + bool(new_start)
    new_ids = fresh.add_tokens(count, generator=torch.Generator().manual_seed(seed))
    return fresh, new_ids


def accuracy(classifier: GPT1Classifier, ids: torch.Tensor, labels: torch.Tensor) -> float:
    with evaluating(classifier):
        class_logits, _ = classifier(ids)
    return float((class_logits.argmax(-1) == labels).double().mean())


def fine_tune(
    settings: FineTuningSettings | None = None, *, data=None, cpu_threads: int | None = 1,
    **overrides,
):  # fmt: skip
    """One run of `settings` (or FineTuningSettings(**overrides)): returns the
    FineTuningResult and the fine-tuned GPT1Classifier. `data` = split(task, seed) may be
    passed to reuse it across runs. `cpu_threads` sets torch's CPU threads for the run
    (restored afterwards; None keeps them), as the course's other training runs do: a model
    this small gains nothing from a second thread."""
    settings = settings or FineTuningSettings(**overrides)
    # the classifier's dropout draws from torch's global generator: seeded here, so that a
    # run does not depend on what ran before it in the process
    with threads_for_cpu(cpu_threads), torch.random.fork_rng(devices=[]):
        torch.manual_seed(settings.seed)
        return _fine_tune(settings, data)


def learning_rate_at(settings: FineTuningSettings, step: int) -> float:
    """The learning rate of optimiser step `step` (0-based): constant, or GPT-1's linear
    warm-up over `warmup` of training then linear decay to 0."""
    if settings.schedule == "constant":
        return settings.lr
    total = settings.total_steps
    warmup = max(1, round(settings.warmup * total))  # at least one step: never a rate of 0
    if step < warmup:
        return settings.lr * (step + 1) / warmup
    return settings.lr * (total - step) / max(1, total - warmup)


def batches(settings: FineTuningSettings, generator: torch.Generator):
    """The rows of each step's batch: a random batch every step, or with `epochs` every
    example once per epoch, in a new random order each epoch."""
    batch = min(settings.batch_size, settings.n_labelled)
    if settings.epochs is None:
        for _ in range(settings.steps):
            yield torch.randperm(settings.n_labelled, generator=generator)[:batch]
        return
    for _ in range(settings.epochs):
        yield from torch.randperm(settings.n_labelled, generator=generator).split(batch)


def _fine_tune(settings: FineTuningSettings, data):
    tokenizer = task_tokenizer(new_start=settings.new_start)
    pool, test = data if data is not None else split(settings.task, settings.seed)
    if settings.n_labelled > len(pool):
        raise ValueError(
            tr(
                "n_labelled must be at most {pool_size}, got {n_labelled}",
                pool_size=len(pool),
                n_labelled=settings.n_labelled,
            )
        )
    train_ids, train_labels = encode(settings.task, pool[: settings.n_labelled], tokenizer)
    known, encoded = test_set(settings.task, settings.new_start)
    test_ids, test_labels = encoded if test is known else encode(settings.task, test, tokenizer)
    model, new_ids = starting_model(settings.layers, settings.seed, model=settings.model,
                                    new_start=settings.new_start,
                                    embeddings=settings.embeddings)  # fmt: skip
    classifier = GPT1Classifier(model, extract_id=new_ids[1], seed=settings.seed,
                                dropout=settings.classifier_dropout,
                                **head_of(settings.task))  # fmt: skip
    optimizer, schedule = adam(
        classifier.parameters(), lambda step: learning_rate_at(settings, step)
    )
    curve, losses = [], []

    def update(rows):
        ids = train_ids[rows]
        ids = ids[..., : int((ids != tokenizer.pad_id).sum(-1).max())]  # drop all-<PAD> columns
        labels = train_labels[rows]
        loss, classification, language = fine_tuning_loss(
            classifier, ids, labels, lam=settings.lam, pad_id=tokenizer.pad_id,
            lm_examples=labels == 1 if settings.lm_on == "grammatical" else None, parts=True,
        )  # fmt: skip
        losses.append((float(classification.detach()), float(language.detach())))
        return descend(optimizer, loss)

    def after(step, loss, elapsed):
        if settings.eval_every and step % settings.eval_every == 0:
            curve.append((step, accuracy(classifier, test_ids, test_labels)))

    classifier.train()
    with checked():  # the encoded ids fit the model: no check in every step
        seconds = training_loop.run(
            batches(settings, torch.Generator().manual_seed(settings.seed)), update, schedule, after
        )
    classifier.eval()  # returned ready to use, as pre-training's train returns its model
    final = accuracy(classifier, test_ids, test_labels)
    return FineTuningResult(settings, final, seconds, curve, losses), classifier


# The conditions of the stored curves: (label, layers, λ). GPT-1's Table 5 compares the full
# model with "no pre-training" and "no aux LM"; its Figure 2 varies the layers transferred.
CONDITIONS = (
    ("pre-trained", 1, 0.5),
    ("pre-trained", 1, 0.0),
    ("pre-trained", 1, 1.0),
    ("embeddings only", 0, 0.5),
    ("no pre-training", None, 0.5),
)
# The two tasks added later (GPT-1 §3.3's similarity and multiple choice) are measured for the
# comparisons the notebook draws from them: λ = 0.5 and 0, and no pre-training.
NEW_TASK_CONDITIONS = (
    ("pre-trained", 1, 0.5),
    ("pre-trained", 1, 0.0),
    ("no pre-training", None, 0.5),
)
SIZES = (16, 32, 64, 128, 256, 512, 1024)
SEEDS = (0, 1, 2)


def measure_curves(
    tasks: Sequence[str] = TASKS,
    sizes: Sequence[int] = SIZES,
    seeds: Sequence[int] = SEEDS,
    conditions=None,
    progress=None,
) -> dict:
    """Accuracy for every task, condition, labelled-set size and seed: a dict that
    `save_curves` writes as JSON. `conditions` default to CONDITIONS for grammaticality and
    entailment, NEW_TASK_CONDITIONS for similarity and multiple choice. `progress(done,
    total)` is called after each run."""

    def conditions_of(task):
        if conditions is not None:
            return conditions
        return CONDITIONS if task in ("grammaticality", "entailment") else NEW_TASK_CONDITIONS

    recipe = FineTuningSettings()
    runs = []
    total = sum(len(conditions_of(task)) for task in tasks) * len(seeds) * len(sizes)
    done = 0
    for task in tasks:
        for seed in seeds:
            data = split(task, seed)
            for label, layers, lam in conditions_of(task):
                for size in sizes:
                    settings = FineTuningSettings(
                        task=task, n_labelled=size, layers=layers, lam=lam, seed=seed
                    )
                    result, _ = fine_tune(settings, data=data)
                    runs.append(
                        dict(
                            task=task,
                            start=label,
                            layers=layers,
                            lam=lam,
                            n_labelled=size,
                            seed=seed,
                            accuracy=result.accuracy,
                        )
                    )
                    done += 1
                    if progress is not None:
                        progress(done, total)
    recipe_fields = {k: v for k, v in asdict(recipe).items() if k in ("steps", "batch_size", "lr")}
    return {"recipe": {**recipe_fields, "test": TEST}, "runs": runs}


def save_curves(curves: dict, path: str | Path = CURVES_PATH, **details) -> Path:
    path = Path(path)
    path.write_text(json.dumps({**curves, "details": details}, ensure_ascii=False, indent=0))
    return path


def load_curves(path: str | Path = CURVES_PATH) -> dict:
    """The stored curves (see `measure_curves`)."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(
            tr(
                "no fine-tuning curves at {path}: run `make fine-tuning-curves` to measure them",
                path=path,
            )
        )
    return json.loads(path.read_text())
