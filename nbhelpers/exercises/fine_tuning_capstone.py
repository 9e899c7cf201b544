"""Notebook 11's capstone: the learner's head, loss and loop fine-tune the pre-trained course
model on a task of the grammar, measured on its 2,000 test examples.

    fine_tune_yours(head=MyTaskHead, loss=my_fine_tuning_loss, loop=my_fine_tuning_loop)

Each part given is checked first (ARENA's pattern, as notebook 08's capstone does): one that
passes is used, one that does not is replaced by nbhelpers' own, and the report says which.
The run is the course's recipe (300 steps of 32 examples, Adam at lr 1e-3, λ = 0.5), so its
accuracy can be read against the stored curves.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import torch

from ..fine_tuning import EXTRACT
from ..support.language import listing, tr
from ..support.threads import cpu_threads
from ..support.validation import check_seed
from .core import *  # noqa: F403 (the checkers' toolkit: core.__all__)
from .fine_tuning import (
    TaskHead,
    check_fine_tuning_loop,
    check_fine_tuning_loss,
    check_task_head,
    reference_loop,
    reference_loss,
)

# The accuracy to reach with 1,024 labelled examples: below the lowest seed of nbhelpers' own
# run with the same recipe (the stored curves: pre-trained, λ = 0.5).
GOALS = {"grammaticality": 0.80, "entailment": 0.65, "similarity": 0.52, "multiple choice": 0.65}
OWN = {"head": TaskHead, "loss": reference_loss, "loop": reference_loop}
CHECKERS = {"head": check_task_head, "loss": check_fine_tuning_loss, "loop": check_fine_tuning_loop}


def part_names() -> dict:
    return {
        "head": tr("classifier head (part 1)"),
        "loss": tr("fine-tuning loss (part 2)"),
        "loop": tr("fine-tuning loop (part 3)"),
    }


@dataclass(repr=False)
class FineTuningCapstoneResult(Report):
    status: str
    lines: list[str]
    accuracy: float | None = None
    yours: list[str] = field(default_factory=list)
    seconds: float = 0.0


@leaves_state_alone  # it seeds torch's generator for the run: the learner's is restored
def fine_tune_yours(
    head=None, loss=None, loop=None, *, task: str = "grammaticality", seed: int = 0
) -> FineTuningCapstoneResult:
    """Fine-tune the course model on `task` with 1,024 labelled examples, with the parts given
    (each checked first; nbhelpers' own where one is not given or has not passed), and measure
    the test accuracy against GOALS[task]."""
    from ..experiments.course_model import load_course_model
    from ..experiments.fine_tuning import (
        FineTuningSettings,
        batches,
        encode,
        head_of,
        load_curves,
        split,
        task_tokenizer,
    )

    if task not in GOALS:
        raise ValueError(tr("task must be one of {tasks}, got {task!r}", tasks=tuple(GOALS),
                            task=task))  # fmt: skip
    check_seed("seed", seed)
    exercise, names = "fine_tune_yours", part_names()
    used, yours, lines = dict(OWN), [], [tr("Your fine-tuning is assembled from:")]
    for name, answer in (("head", head), ("loss", loss), ("loop", loop)):
        if answer is None:
            lines.append("  " + tr("· {part}: nbhelpers' own (none given)", part=names[name]))
            continue
        result = CHECKERS[name](answer)
        if result.status == PASSED:
            used[name] = answer
            yours.append(name)
            lines.append("  " + tr("✓ {part}: yours", part=names[name]))
        else:
            lines.append("  " + tr("… {part}: nbhelpers' own, since yours has not passed its "
                                   "checker yet:", part=names[name]))  # fmt: skip
            lines += ["    " + line.strip() for line in result.lines]
    if not yours:
        lines.append(tr("… {exercise}: nothing of yours has passed its checker yet. Finish the "
                        "three parts, then run this cell again.", exercise=exercise))  # fmt: skip
        return FineTuningCapstoneResult(NOT_ATTEMPTED, lines)
    settings = FineTuningSettings(task=task, n_labelled=1024, seed=seed)
    tokenizer = task_tokenizer()
    pool, test = split(task, seed)
    train_ids, train_labels = encode(task, pool[: settings.n_labelled], tokenizer)
    test_ids, test_labels = encode(task, test, tokenizer)
    steps = []
    for rows in batches(settings, torch.Generator().manual_seed(seed)):
        ids = train_ids[rows]
        steps.append((ids[..., : int((ids != tokenizer.pad_id).sum(-1).max())], train_labels[rows]))
    gpt = load_course_model().train()
    kind = head_of(task)["kind"]
    torch.manual_seed(seed)
    start = time.perf_counter()
    try:
        with cpu_threads(1):
            the_head = used["head"](gpt.config.d_model, kind)
            used["loop"](gpt, the_head, used["loss"], steps, settings.lam, settings.lr,
                         tokenizer.pad_id)  # fmt: skip
            gpt.eval()
            with torch.no_grad():
                h = gpt.hidden_states(test_ids)
                log_p = the_head(h, test_ids, tokenizer.ids[EXTRACT])
    except Exception as error:
        lines.append(tr("✗ {exercise}: the run raised {error}", exercise=exercise,
                        error=first_line(error)))  # fmt: skip
        return FineTuningCapstoneResult(FAILED, lines, yours=yours)
    seconds = time.perf_counter() - start
    accuracy = float((log_p.argmax(-1) == test_labels).double().mean())
    key = (task, "pre-trained", 0.5, 1024)  # nbhelpers' own runs with this recipe
    own = [r["accuracy"] for r in load_curves()["runs"]
           if (r["task"], r["start"], r["lam"], r["n_labelled"]) == key]  # fmt: skip
    task_name = {
        "grammaticality": tr("grammaticality"),
        "entailment": tr("entailment"),
        "similarity": tr("similarity"),
        "multiple choice": tr("multiple choice"),
    }[task]
    said = dict(exercise=exercise, task=task_name, accuracy=accuracy, goal=GOALS[task],
                low=min(own), high=max(own), seconds=seconds)  # fmt: skip
    others = [names[name] for name in OWN if name not in yours]
    if others:  # the run says what nbhelpers' parts did, not yet what all of yours do
        lines.append(
            tr("… {exercise}: {task}, test accuracy {accuracy:.3f} (goal {goal}), with "
               "nbhelpers' own {parts}: make yours pass its checker, then run this cell again",
               parts=listing(others), **said)
        )  # fmt: skip
        return FineTuningCapstoneResult(FAILED, lines, accuracy, yours, seconds)
    if accuracy >= GOALS[task]:
        lines.append(
            tr("✓ {exercise}: {task}, test accuracy {accuracy:.3f} ≥ {goal} after "
               "{seconds:.0f} s (nbhelpers' own, 3 seeds: {low:.3f}-{high:.3f})", **said)
        )  # fmt: skip
        return FineTuningCapstoneResult(PASSED, lines, accuracy, yours, seconds)
    lines.append(tr("✗ {exercise}: {task}, test accuracy {accuracy:.3f} < {goal} (nbhelpers' "
                    "own, 3 seeds: {low:.3f}-{high:.3f}): every part passed its checker, so "
                    "try another seed", **said))  # fmt: skip
    return FineTuningCapstoneResult(FAILED, lines, accuracy, yours, seconds)
