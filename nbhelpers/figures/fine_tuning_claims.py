"""What fine-tuning does, drawn from the stored measurements (notebook 11,
experiments/fine_tuning_claims.py): what a linear read-out of the frozen model can reach, the
auxiliary objective's effect on convergence, and the blocks transferred (GPT-1's Figure 2,
left)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
from matplotlib.figure import Figure

from ..support.language import tr
from .bands import band
from .canvas import BlitCanvas, Canvas
from .style import GREY, INK, PALE_GREY, SERIES, course_font
from .tokens import name_of


def probe_name(features: str) -> str:
    return {
        "h_L^m, course model": tr("probe of h_L^m, course model (1 block)"),
        "h_L^m, deep model": tr("probe of h_L^m, deep model (4 blocks)"),
        "last word, course model": tr("probe of the last word's state, course model"),
        "log-probabilities": tr("probe of the 8 lowest token log-probabilities"),
    }[features]


def condition_name(lam: float, lm_on: str) -> str:
    if lm_on == "grammatical":
        return tr("λ = {lam:g}, L1 on grammatical sentences only", lam=lam)
    return tr("λ = {lam:g}", lam=lam)


def _axes_style(ax, ylow=0.4):
    ax.axhline(0.5, color=PALE_GREY, lw=0.8, zorder=0.5)  # chance: under every curve
    ax.set_ylim(ylow, 1.02)
    ax.set_ylabel(tr("test accuracy"), fontsize=9)
    ax.tick_params(labelsize=9)
    ax.grid(True, alpha=0.3)


def _groups(runs, key, values):
    return [[r["accuracy"] for r in runs if r[key] == v] for v in values]


@course_font
def probes_figure(probes: Sequence[dict], recipes: Sequence[dict],
                  fine_tuning_runs: Sequence[dict]) -> Figure:  # fmt: skip
    """Grammaticality: test accuracy against labelled examples of each linear probe, beside
    fine-tuning with the course's recipe and with the paper's (mean over seeds, band from the
    lowest to the highest)."""
    figure = Canvas(figsize=(8.4, 5.0), dpi=100).figure
    ax = figure.subplots()
    markers = {"h_L^m, course model": "o", "h_L^m, deep model": "s",
               "last word, course model": "P", "log-probabilities": "D"}  # fmt: skip
    for colour, (features, marker) in zip(SERIES, markers.items(), strict=False):
        runs = [r for r in probes if r["features"] == features]
        sizes = sorted({r["n_labelled"] for r in runs})
        label = probe_name(features).replace("h_L^m", "$h_L^m$")  # a formula in the legend
        band(ax, sizes, _groups(runs, "n_labelled", sizes), colour, "-", marker, label)
    key = ("grammaticality", "pre-trained", 0.5)
    tuned = [r for r in fine_tuning_runs if (r["task"], r["start"], r["lam"]) == key]
    sizes = sorted({r["n_labelled"] for r in tuned})
    band(ax, sizes, _groups(tuned, "n_labelled", sizes), GREY, ":", "^",
         tr("fine-tuned, course recipe"))  # fmt: skip
    paper = [r for r in recipes if (r["task"], r["recipe"]) == ("grammaticality", "paper")]
    band(ax, sizes, _groups(paper, "n_labelled", sizes), INK, "--", "v",
         tr("fine-tuned, GPT-1's recipe"))  # fmt: skip
    ax.set_xscale("log", base=2)
    ax.set_xticks(sizes, [str(n) for n in sizes])
    ax.minorticks_off()
    ax.set_xlabel(tr("labelled examples"), fontsize=9)
    ax.set_title(tr("grammaticality: what a linear read-out of the frozen model reaches"),
                 fontsize=10)  # fmt: skip
    _axes_style(ax)
    ax.legend(fontsize=9, loc="upper center", bbox_to_anchor=(0.5, -0.14), ncol=2, frameon=False)
    figure.tight_layout()
    return figure


CONDITION_LOOKS = ((SERIES[0], ":", "o"), (SERIES[1], "-", "s"), (SERIES[2], "--", "D"))


def conditions_of(auxiliary: dict) -> list[tuple]:
    """The (λ, lm_on) conditions of the stored runs, in their order."""
    return list(dict.fromkeys((r["lam"], r["lm_on"]) for r in auxiliary["runs"]))


def convergence_curves(ax, auxiliary: dict, task: str, n_labelled: int) -> list:
    """Draw one task's accuracy against steps on `ax`, each condition in its look (mean over
    seeds, band from the lowest to the highest); returns the artists drawn."""
    drawn = []
    looks = dict(zip(conditions_of(auxiliary), CONDITION_LOOKS, strict=False))
    for condition, (colour, style, marker) in looks.items():
        key = (task, *condition, n_labelled)
        mine = [r for r in auxiliary["runs"]
                if (r["task"], r["lam"], r["lm_on"], r["n_labelled"]) == key]  # fmt: skip
        if not mine:
            continue
        steps = [step for step, _ in mine[0]["curve"]]
        groups = [[r["curve"][i][1] for r in mine] for i in range(len(steps))]
        drawn += band(ax, steps, groups, colour, style, marker, condition_name(*condition))
    return drawn


def _convergence_axes(ax, task: str, n_labelled: int):
    ax.set_xlabel(tr("fine-tuning steps"), fontsize=9)
    count = format(n_labelled, ",")  # 1,024: grouped digits in both languages
    ax.set_title(tr("{task}, {n} labelled examples", task=name_of(task), n=count), fontsize=10)


class ConvergenceCanvas(BlitCanvas):
    """One task's accuracy against fine-tuning steps for each condition, and a marker at the
    chosen step: the axes are made once, a draw replaces the curves, the title and the
    legend and moves the marker (ConvergenceExplorer)."""

    def __init__(self, *, blit: bool = False):
        super().__init__(figsize=(7.6, 3.7), blit=blit)
        self.ax = self.figure.add_axes((0.09, 0.32, 0.88, 0.6))
        _axes_style(self.ax)
        self.ax.set_xlim(0, 310)
        self._drawn: list = []
        self._marker = self.ax.axvline(0, color=GREY, lw=1.0)

    def draw(self, auxiliary: dict, task: str, n_labelled: int, step: int) -> Figure:
        for artist in self._drawn:
            artist.remove()
        self._drawn = convergence_curves(self.ax, auxiliary, task, n_labelled)
        self._marker.set_xdata([step, step])
        _convergence_axes(self.ax, task, n_labelled)
        legend = self.ax.legend(fontsize=9, loc="upper center", bbox_to_anchor=(0.5, -0.15),
                                ncol=2, frameon=False)  # fmt: skip
        self.painted(*self._drawn, self._marker, self.ax.title, legend)
        return self.figure


@course_font
def convergence_figure(auxiliary: dict, n_labelled: int = 1024) -> Figure:
    """Test accuracy against fine-tuning steps, one panel per task, for each λ (and L1 on
    the grammatical sentences only): mean over seeds, band from the lowest to the highest."""
    tasks = list(dict.fromkeys(r["task"] for r in auxiliary["runs"]))
    figure = Canvas(figsize=(5.2 * len(tasks), 4.6), dpi=100).figure
    axes = figure.subplots(1, len(tasks), squeeze=False)[0]
    for ax, task in zip(axes, tasks, strict=True):
        convergence_curves(ax, auxiliary, task, n_labelled)
        _convergence_axes(ax, task, n_labelled)
        _axes_style(ax)
    shown = {}  # every condition once, whichever panel has it
    for ax in axes:
        for handle, label in zip(*ax.get_legend_handles_labels(), strict=True):
            shown.setdefault(label, handle)
    labels = list(shown)
    figure.legend(list(shown.values()), labels, fontsize=9, loc="lower center", ncol=len(labels),
                  frameon=False)  # fmt: skip
    figure.tight_layout(rect=(0, 0.08, 1, 1))
    return figure


@course_font
def layers_figure(layers: Sequence[dict]) -> Figure:
    """GPT-1's Figure 2 (left) in miniature: test accuracy against the number of the deep
    model's blocks transferred, one line per task (mean over seeds, band from the lowest to
    the highest), and each task's accuracy with nothing pre-trained as a dashed line."""
    figure = Canvas(figsize=(7.2, 4.8), dpi=100).figure
    ax = figure.subplots()
    tasks = list(dict.fromkeys(r["task"] for r in layers))
    counts = sorted({r["layers"] for r in layers if r["layers"] is not None})
    for colour, task in zip(SERIES, tasks, strict=False):
        mine = [r for r in layers if r["task"] == task]
        band(ax, counts, _groups(mine, "layers", counts), colour, "-", "o", name_of(task))
        scratch = [r["accuracy"] for r in mine if r["layers"] is None]
        ax.axhline(sum(scratch) / len(scratch), color=colour, ls="--", lw=1.4, zorder=3,
                   label=tr("{task}, no pre-training", task=name_of(task)))  # fmt: skip
    ax.set_xticks(counts, [str(c) for c in counts])
    ax.set_xlabel(tr("blocks transferred (0: the embeddings only)"), fontsize=9)
    count = format(layers[0]["n_labelled"], ",")  # 1,024: grouped digits in both languages
    ax.set_title(tr("layers transferred, {n} labelled examples", n=count), fontsize=10)
    _axes_style(ax)
    ax.legend(fontsize=9, loc="upper center", bbox_to_anchor=(0.5, -0.16), ncol=2, frameon=False)
    figure.tight_layout()
    return figure


@course_font
def fine_tuning_losses_figure(
    runs: Mapping[str, Sequence[tuple[float, float]]], lam: float, window: int = 10
) -> Figure:
    """The two terms of L3 along fine-tuning runs, {label: [(-L2 / B, -L1 / N) per step]}:
    the classifier's cross-entropy and λ times the language model's, each a moving mean over
    `window` steps (notebook 11's live run)."""
    if not isinstance(runs, Mapping) or not runs or any(len(v) < window for v in runs.values()):
        raise ValueError(
            tr("runs must map labels to at least {window} (L2, L1) pairs", window=window)
        )
    figure = Canvas(figsize=(8.6, 3.3), dpi=100).figure
    left, right = figure.subplots(1, 2, sharex=True)
    kernel = np.ones(window) / window
    for (label, losses), colour in zip(runs.items(), SERIES, strict=False):
        terms = np.asarray(losses, dtype=float)  # (steps, 2)
        steps = np.arange(window, len(terms) + 1)  # each mean ends at its last step
        for ax, column, scale in ((left, 0, 1.0), (right, 1, lam)):
            mean = np.convolve(terms[:, column], kernel, mode="valid")
            ax.plot(steps, scale * mean, color=colour, lw=1.6, label=label)
    left.set_title(tr("the classifier: $-L_2 / B$"), fontsize=10)
    right.set_title(tr("the language model: $\\lambda \\cdot (-L_1 / N)$, λ = {lam:g}", lam=lam),
                    fontsize=10)  # fmt: skip
    for ax in (left, right):
        ax.set_xlabel(tr("fine-tuning step"), fontsize=9)
        ax.tick_params(labelsize=9)
        ax.grid(alpha=0.3)
    left.set_ylabel(tr("nats, mean of {window} steps", window=window), fontsize=9)
    left.legend(fontsize=9)
    figure.tight_layout()
    return figure
