"""Zero-shot beside fine-tuning (notebook 11, GPT-1 §5): accuracy against the labelled
examples that set a threshold, and against the pre-training steps (the shape of GPT-1's
Figure 2, right)."""

from __future__ import annotations

from collections.abc import Sequence

from matplotlib.figure import Figure

from ..support.language import tr
from .bands import band, seeds_entry
from .canvas import Canvas
from .style import GREY, INK, PALE_GREY, SERIES, course_font
from .tokens import name_of

# The heuristics' labels and colours; fine-tuning's stored curve is drawn in grey.
METHOD_STYLES = {
    "lowest": (SERIES[0], "-", "o"),
    "mean": (SERIES[1], "--", "s"),
}


def method_name(method: str) -> str:
    return {
        "lowest": tr("zero-shot: lowest token log-probability"),
        "mean": tr("zero-shot: mean token log-probability (GPT-1)"),
    }[method]


@course_font
def zero_shot_figure(
    by_size: Sequence[dict],
    by_step: Sequence[dict],
    fine_tuning_runs: Sequence[dict],
    tasks: Sequence[str] = ("grammaticality",),
) -> Figure:
    """One row per task. Left: test accuracy against the labelled examples, each zero-shot
    heuristic (mean over seeds, band from the lowest to the highest seed) beside the stored
    fine-tuning of the pre-trained model with λ = 0.5, and the heuristic's ceiling with the
    grammar's exact probabilities (method "truth"). Right: the heuristics' accuracy with a
    threshold from 16 labelled examples against the pre-training step of the checkpoint."""
    figure = Canvas(figsize=(10.4, 4.0 * len(tasks)), dpi=100).figure
    axes = figure.subplots(len(tasks), 2, squeeze=False, gridspec_kw={"width_ratios": (3, 2)})
    for row, task in enumerate(tasks):
        left, right = axes[row]
        methods = [m for m in dict.fromkeys(r["method"] for r in by_size if r["task"] == task)
                   if m != "truth"]  # fmt: skip
        for method in methods:
            colour, style, marker = METHOD_STYLES[method]
            runs = [r for r in by_size if (r["task"], r["method"]) == (task, method)]
            sizes = sorted({r["n_labelled"] for r in runs if r["n_labelled"] is not None})
            groups = [[r["accuracy"] for r in runs if r["n_labelled"] == n] for n in sizes]
            band(left, sizes, groups, colour, style, marker, method_name(method))
            mine = [r for r in by_step if (r["task"], r["method"]) == (task, method)]
            steps = sorted({r["step"] for r in mine})
            at_16 = [
                [r["accuracy"] for r in mine if (r["step"], r["n_labelled"]) == (step, 16)]
                for step in steps
            ]
            band(right, steps, at_16, colour, style, marker, method_name(method))
        tuned = [
            r for r in fine_tuning_runs
            if (r["task"], r["start"], r["lam"]) == (task, "pre-trained", 0.5)
        ]  # fmt: skip
        sizes = sorted({r["n_labelled"] for r in tuned})
        groups = [[r["accuracy"] for r in tuned if r["n_labelled"] == n] for n in sizes]
        band(left, sizes, groups, GREY, ":", "^", tr("fine-tuned, pre-trained, λ = 0.5"))
        for r in by_size:
            if (r["task"], r["method"]) == (task, "truth"):
                ceiling = tr("the grammar's exact probabilities, best threshold")
                left.axhline(r["accuracy"], color=INK, ls=(0, (4, 3)), lw=1.0, label=ceiling)
        ticks = sorted({r["n_labelled"] for r in by_size if r["n_labelled"] is not None})
        left.set_xscale("log", base=2)
        left.set_xticks(ticks, [str(n) for n in ticks])
        left.minorticks_off()
        title = tr("{task}: accuracy against labelled examples", task=name_of(task))
        left.set_title(title, fontsize=10)
        left.set_xlabel(tr("labelled examples"), fontsize=9)
        right.set_xticks(steps, [str(s) for s in steps])
        right.set_title(tr("{task}: threshold from 16 examples", task=name_of(task)), fontsize=10)
        right.set_xlabel(tr("pre-training step of the checkpoint"), fontsize=9)
        for ax in (left, right):
            ax.axhline(0.5, color=PALE_GREY, lw=0.8)
            ax.set_ylim(0.4, 1.02)
            ax.set_ylabel(tr("test accuracy"), fontsize=9)
            ax.tick_params(labelsize=9)
            ax.grid(True, alpha=0.3)
        # below the axes, off every curve
        handles = [*left.get_legend_handles_labels()[0], seeds_entry(len(at_16[0]))]
        left.legend(
            handles=handles, fontsize=9, loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=2,
            frameon=False,
        )  # fmt: skip
    figure.tight_layout()
    return figure
