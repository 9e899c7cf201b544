"""Notebook 11's explorers: the token sequences each kind of task becomes, and the measured
fine-tuning curves under λ and the labelled-set size."""

from __future__ import annotations

import ipywidgets as widgets
import numpy as np

from ..corpus.tasks import make_task
from ..experiments.fine_tuning import load_curves
from ..experiments.fine_tuning_claims import load_claims
from ..figures.fine_tuning_claims import ConvergenceCanvas, condition_name, conditions_of
from ..figures.tokens import FineTuningCurvesCanvas, TokenRowsCanvas, name_of
from ..fine_tuning import (
    classification_input,
    entailment_input,
    multiple_choice_inputs,
    similarity_inputs,
)
from ..support.language import tr
from .base import FigureExplorer
from .readout import markup, markup_n

KINDS = ("classification", "entailment", "similarity", "multiple choice")


def task_rows(kind: str, example: int) -> tuple[list[list[str]], list[str]]:
    """The sequences that example `example` of the grammar's tasks becomes under `kind`'s
    input transformation, and a label for each row."""
    if kind not in KINDS:
        raise ValueError(tr("kind must be one of {KINDS}, got {kind!r}", KINDS=KINDS, kind=kind))
    grammatical = [e for e in make_task("grammaticality", 4 * example + 16, seed=3) if e.label]
    a, b = (list(e.parts[0]) for e in grammatical[2 * example : 2 * example + 2])
    if kind == "classification":
        return [classification_input(a)], [tr("text")]
    premise = make_task("entailment", example + 1, seed=3)[-1]
    if kind == "entailment":
        return [entailment_input(*premise.parts)], [tr("premise, hypothesis")]
    if kind == "similarity":
        return similarity_inputs(a, b), [tr("a, b"), tr("b, a")]
    context = a[: a.index("を") + 1]
    answers = [["歩く"], ["泳ぐ"], ["飛ぶ"]]
    return multiple_choice_inputs(context, answers), [
        tr("answer {k}", k=k) for k in range(len(answers))
    ]


class TaskInputExplorer(FigureExplorer):
    """Pick a kind of task and an example: the figure shows the token sequences that GPT-1's
    input transformation (§3.3) makes of it, from <SOS> to <EXTRACT>."""

    def __init__(self, kind: str = "entailment", example: int = 0):
        if kind not in KINDS:
            raise ValueError(
                tr("kind must be one of {KINDS}, got {kind!r}", KINDS=KINDS, kind=kind)
            )
        self.kind = widgets.Dropdown(
            options=[(name_of(k), k) for k in KINDS], value=kind, description=tr("task")
        )
        self.example = widgets.IntSlider(
            value=example, min=0, max=9, description=tr("example"), continuous_update=True
        )
        self.canvas = TokenRowsCanvas()
        super().__init__([self.kind, self.example])
        self.redraw()

    def rows(self) -> list[list[str]]:
        return task_rows(self.kind.value, self.example.value)[0]

    def redraw(self) -> None:
        rows, labels = task_rows(self.kind.value, self.example.value)
        self.canvas.draw(rows, labels)
        self.image.value = self.canvas.png()
        lengths = ", ".join(str(len(r)) for r in rows)
        self.show(
            markup_n(
                "{n} sequence of {lengths} tokens",
                "{n} sequences of {lengths} tokens",
                len(rows),
                lengths=lengths,
            )
        )


class FineTuningCurvesExplorer(FigureExplorer):
    """The stored fine-tuning curves: choose the task, λ and a labelled-set size; the figure
    draws accuracy against the labelled-set size, the readout the chosen size's numbers."""

    def __init__(self, curves: dict | None = None, *, task: str = "entailment"):
        self.runs = (curves or load_curves())["runs"]
        tasks = sorted({r["task"] for r in self.runs})
        if task not in tasks:
            raise ValueError(
                tr("task must be one of {tasks}, got {task!r}", tasks=tasks, task=task)
            )
        sizes = sorted({r["n_labelled"] for r in self.runs})
        self.task = widgets.Dropdown(
            options=[(name_of(t), t) for t in tasks], value=task, description=tr("task")
        )
        lams = self._lams(task)
        self.lam = widgets.SelectionSlider(
            options=[(f"{v:g}", v) for v in lams], value=0.5 if 0.5 in lams else lams[0],
            description="λ", continuous_update=True,
        )  # fmt: skip
        self._syncing = False
        self.n_labelled = widgets.SelectionSlider(
            options=[(str(n), n) for n in sizes], value=sizes[len(sizes) // 2],
            description=tr("labelled examples"), continuous_update=True,
        )  # fmt: skip
        self.canvas = FineTuningCurvesCanvas(blit=True)
        super().__init__([self.task, self.lam, self.n_labelled])
        self.redraw()

    def _lams(self, task: str) -> list[float]:
        """The λ the stored runs of the pre-trained model have for `task`."""
        return sorted(
            {r["lam"] for r in self.runs if (r["task"], r["start"]) == (task, "pre-trained")}
        )

    def _on_change(self, change) -> None:
        if self._syncing:
            return
        if change["owner"] is self.task:  # another task may have been measured with other λ
            lams = self._lams(change["new"])
            self._syncing = True  # new options would otherwise redraw once more
            try:
                kept = (
                    self.lam.value if self.lam.value in lams else (0.5 if 0.5 in lams else lams[0])
                )
                self.lam.options = [(f"{v:g}", v) for v in lams]
                self.lam.value = kept
            finally:
                self._syncing = False
        self.redraw()

    def accuracies(self, start: str, lam: float) -> list[float]:
        """The chosen task's accuracies at the chosen size, one per seed."""
        return [
            r["accuracy"]
            for r in self.runs
            if r["task"] == self.task.value and r["start"] == start and r["lam"] == lam
            and r["n_labelled"] == self.n_labelled.value
        ]  # fmt: skip

    def redraw(self) -> None:
        self.canvas.draw(self.runs, self.task.value, self.lam.value, self.n_labelled.value)
        self.image.value = self.canvas.png()
        lines = []
        for start, lam in (("pre-trained", self.lam.value), ("no pre-training", 0.5)):
            values = self.accuracies(start, lam)
            if not values:  # similarity and multiple choice were measured with fewer λ
                lines.append(markup("{start}, λ = {lam:g}: no stored runs for this task",
                                    start=name_of(start), lam=lam))  # fmt: skip
            else:
                lines.append(markup(
                    "{start}, λ = {lam:g}: {mean:.3f} (seeds {low:.3f} to {high:.3f})",
                    start=name_of(start), lam=lam, mean=float(np.mean(values)),
                    low=min(values), high=max(values),
                ))  # fmt: skip
        self.show("<br>".join(lines))


class ConvergenceExplorer(FigureExplorer):
    """The auxiliary objective's stored runs: choose the task, the labelled-set size and a
    fine-tuning step; the figure draws test accuracy against steps for λ = 0, λ = 0.5 (and L1
    on grammatical sentences only), the readout each one's accuracy at that step and the
    language model's KL inside clauses after the 300 steps."""

    def __init__(self, claims: dict | None = None, *, task: str = "grammaticality"):
        self.auxiliary = (claims or load_claims())["auxiliary"]
        runs = self.auxiliary["runs"]
        tasks = list(dict.fromkeys(r["task"] for r in runs))
        if task not in tasks:
            raise ValueError(
                tr("task must be one of {tasks}, got {task!r}", tasks=tasks, task=task)
            )
        sizes = sorted({r["n_labelled"] for r in runs})
        steps = [step for step, _ in runs[0]["curve"]]
        self.task = widgets.Dropdown(
            options=[(name_of(t), t) for t in tasks], value=task, description=tr("task")
        )
        self.n_labelled = widgets.SelectionSlider(
            options=[(str(n), n) for n in sizes], value=sizes[-1],
            description=tr("labelled examples"), continuous_update=True,
        )  # fmt: skip
        self.step = widgets.SelectionSlider(
            options=[(str(s), s) for s in steps], value=steps[2], description=tr("step"),
            continuous_update=True,
        )  # fmt: skip
        self.canvas = ConvergenceCanvas(blit=True)
        super().__init__([self.task, self.n_labelled, self.step])
        self.redraw()

    def runs_of(self, lam: float, lm_on: str) -> list[dict]:
        key = (self.task.value, lam, lm_on, self.n_labelled.value)
        return [r for r in self.auxiliary["runs"]
                if (r["task"], r["lam"], r["lm_on"], r["n_labelled"]) == key]  # fmt: skip

    def redraw(self) -> None:
        step = self.step.value
        self.canvas.draw(self.auxiliary, self.task.value, self.n_labelled.value, step)
        self.image.value = self.canvas.png()
        lines = []
        for lam, lm_on in conditions_of(self.auxiliary):
            mine = self.runs_of(lam, lm_on)
            if not mine:
                continue
            at_step = [dict(r["curve"])[step] for r in mine]
            kl = [r["kl"]["inside clauses"] for r in mine]
            lines.append(markup(
                "{condition}: accuracy at step {step} {mean:.3f} (seeds {low:.3f} to {high:.3f}); "
                "KL inside clauses after 300 steps {kl:.3f}",
                condition=condition_name(lam, lm_on), step=step, mean=float(np.mean(at_step)),
                low=min(at_step), high=max(at_step), kl=float(np.mean(kl)),
            ))  # fmt: skip
        self.show("<br>".join(lines))
