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
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import torch

from ..corpus import JapaneseGrammar
from ..corpus.tasks import TASKS, LabelledExample, make_task
from ..corpus.tokenizer import SPECIALS, Tokenizer
from ..fine_tuning import (
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
    check_seed,
    checked,
    is_int,
    is_number,
)
from .course_model import load_course_model

CURVES_PATH = Path(__file__).resolve().parent.parent / "data" / "fine_tuning_curves.json"
TEST = dict(n=2000, seed=10_000)  # the test set of every run: never trained on
POOL_SEED_OFFSET = 1_000  # training examples come from seed + this, test examples excluded


@dataclass(frozen=True)
class FineTuningSettings:
    """One fine-tuning run: the task, how many labelled examples, where the weights start
    (`layers`: how many pre-trained blocks are transferred, 0 for the embeddings only, None for
    nothing pre-trained), λ, and the optimiser's recipe."""

    task: str = "grammaticality"
    n_labelled: int = 256
    layers: int | None = 1
    lam: float = 0.5
    steps: int = 300
    batch_size: int = 32
    lr: float = 1e-3
    seed: int = 0

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


@dataclass
class FineTuningResult:
    settings: FineTuningSettings
    accuracy: float  # on the TEST set
    seconds: float  # training time, evaluation excluded


def task_tokenizer(grammar: JapaneseGrammar | None = None):
    """The grammar's tokenizer with <DELIM> and <EXTRACT> appended: ids that match the rows
    `GPT1.add_tokens(2)` appends to the course model's W_e."""
    grammar = grammar or JapaneseGrammar()
    words = [t for t in grammar.tokenizer.tokens if t not in SPECIALS]
    return Tokenizer([*words, *TASK_TOKENS])


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
    with several sequences per example, and their labels (B,)."""
    labels = torch.tensor([e.label for e in examples], dtype=torch.long)
    inputs = [task_input(task, e) for e in examples]
    if isinstance(inputs[0][0], str):  # one sequence per example
        return tokenizer.pad([tokenizer.encode(x, sos=False) for x in inputs]), labels
    rows = [tokenizer.encode(x, sos=False) for sequences in inputs for x in sequences]
    per_example = len(inputs[0])
    return tokenizer.pad(rows).unflatten(0, (len(examples), per_example)), labels  # (B, m, n)


@functools.cache
def test_set(task: str) -> tuple[tuple[LabelledExample, ...], tuple[torch.Tensor, torch.Tensor]]:
    """The test set of `task` (the same for every run) and its encoding, made once: a sweep
    of fine-tuning runs evaluates on it hundreds of times."""
    test = tuple(make_task(task, **TEST))
    return test, encode(task, test, task_tokenizer())


def split(task: str, seed: int, n_pool: int = 1024):
    """(training pool, test set): the test set is the same for every seed; the pool holds
    n_pool examples of `seed` that are not in it, and a run takes its first n_labelled."""
    test, _ = test_set(task)
    seen = {e.parts for e in test}
    fresh = [e for e in make_task(task, 4 * n_pool, seed + POOL_SEED_OFFSET) if e.parts not in seen]
    return fresh[:n_pool], test


def starting_model(layers: int | None, seed: int) -> tuple[GPT1, list[int]]:
    """The model fine-tuning starts from (float32, on the CPU) with <DELIM> and <EXTRACT>
    appended to W_e, and their ids. Whatever is not transferred is freshly initialised."""
    pretrained = load_course_model()
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = GPT1(pretrained.config)
    if layers is not None:
        if layers > len(pretrained.blocks):
            raise ValueError(
                tr(
                    "layers must be at most {blocks}, the course model's blocks",
                    blocks=len(pretrained.blocks),
                )
            )
        keep = ("W_e.", "W_p", *(f"blocks.{i}." for i in range(layers)))
        state = {k: v for k, v in pretrained.state_dict().items() if k.startswith(keep)}
        model.load_state_dict(state, strict=False)
    new_ids = model.add_tokens(len(TASK_TOKENS), generator=torch.Generator().manual_seed(seed))
    return model, new_ids


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
    with threads_for_cpu(cpu_threads):
        return _fine_tune(settings or FineTuningSettings(**overrides), data)


def _fine_tune(settings: FineTuningSettings, data):
    tokenizer = task_tokenizer()
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
    known, encoded = test_set(settings.task)
    test_ids, test_labels = encoded if test is known else encode(settings.task, test, tokenizer)
    model, (_, extract_id) = starting_model(settings.layers, settings.seed)
    classifier = GPT1Classifier(model, extract_id=extract_id, seed=settings.seed,
                                **head_of(settings.task))  # fmt: skip
    optimizer = torch.optim.Adam(classifier.parameters(), lr=settings.lr)
    generator = torch.Generator().manual_seed(settings.seed)
    batch = min(settings.batch_size, settings.n_labelled)
    classifier.train()
    start = time.perf_counter()
    with checked():  # the encoded ids fit the model: no check in every step
        for _ in range(settings.steps):
            rows = torch.randperm(settings.n_labelled, generator=generator)[:batch]
            ids = train_ids[rows]
            ids = ids[..., : int((ids != tokenizer.pad_id).sum(-1).max())]  # drop all-<PAD> columns
            loss = fine_tuning_loss(
                classifier, ids, train_labels[rows], lam=settings.lam, pad_id=tokenizer.pad_id
            )
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
    seconds = time.perf_counter() - start
    result = FineTuningResult(settings, accuracy(classifier, test_ids, test_labels), seconds)
    return result, classifier


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
