"""Notebook 08's training curves: KL(true ‖ model) and the held-out loss against the step, and
the KL per grammar rule."""

from __future__ import annotations

from collections.abc import Mapping

from matplotlib.figure import Figure

from ..experiments.pretraining import TrainingHistory
from ..support.language import N_, tr
from .canvas import Canvas
from .style import BLUE, GREEN, GREY, ORANGE, RED, course_font


@course_font
def training_figure(
    history: TrainingHistory,
    kl_target: float = 0.01,
    baselines: Mapping[str, float] | None = None,
) -> Figure:
    """Two panels against the training step: KL(true ‖ model) on a log scale with the target
    and `baselines` ({name: KL}, drawn as horizontal lines; the legend below the axes), and
    the held-out loss above the entropy-rate floor."""
    figure = Canvas(figsize=(9.6, 4.8), dpi=100).figure
    kl_ax, loss_ax = figure.subplots(1, 2)
    kl_ax.plot(history.steps, history.kl, marker="o", markersize=3, color=BLUE)
    kl_ax.axhline(
        kl_target,
        color=RED,
        linestyle="--",
        label=tr("target {target} nats", target=kl_target),
    )
    # Models that see only the last few tokens, exactly: how far each stays from the truth.
    styles = (":", "-.", (0, (6, 3)), (0, (3, 1, 1, 1, 1, 1)))  # no two alike
    for (name, kl), style in zip((baselines or {}).items(), styles, strict=False):
        kl_ax.axhline(kl, color=GREY, linestyle=style, linewidth=1.2, label=f"{name} {kl:.3f}")
    kl_ax.set_yscale("log")
    kl_ax.set_xlabel(tr("training step"))
    kl_ax.set_ylabel(tr("mean KL(true ‖ model), nats"))
    kl_ax.set_title(tr("the model's distributions converge to the truth"))
    # below the axes: inside, it would hide part of the curve
    kl_ax.legend(fontsize=9, loc="upper center", bbox_to_anchor=(0.5, -0.16), ncol=2)
    loss_ax.plot(
        history.steps, history.heldout_loss, marker="o", markersize=3, label=tr("held-out")
    )
    loss_ax.plot(
        history.steps, history.train_loss, color=ORANGE, alpha=0.7, label=tr("training batches")
    )
    loss_ax.axhline(
        history.entropy_rate,
        color="black",
        linestyle="--",
        label=tr("entropy rate {rate:.3f} (the floor)", rate=history.entropy_rate),
    )
    top = max(history.heldout_loss[0], history.entropy_rate) + 0.3
    loss_ax.set_ylim(history.entropy_rate - 0.1, min(top, history.entropy_rate + 1.5))
    loss_ax.set_xlabel(tr("training step"))
    loss_ax.set_ylabel(tr("cross-entropy per token, nats"))
    loss_ax.set_title(tr("the loss approaches the floor"))
    loss_ax.legend(fontsize=9)
    figure.tight_layout()
    return figure


# One colour, line style and marker per rule, so that curves stay apart in print and for
# colour-blind readers; the verb, the rule the course follows, is drawn thickest.
RULE_COLOURS = (
    BLUE, ORANGE, GREEN, RED, "#7b5ea8", "#8c6d31",
    "#d36fb0", "#5f5f5f", "#1f9eae", "#b8a200", "#222222",
)  # fmt: skip
RULE_STYLES = (
    "-", "--", "-.", ":", (0, (5, 1, 1, 1, 1, 1)), (0, (8, 2)), (0, (3, 1, 1, 1)),
    (0, (1, 3)), (0, (6, 2, 2, 2)), (0, (10, 3, 2, 3)), (0, (2, 1)),
)  # fmt: skip
RULE_MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*", "<", ">", "h")


def rule_label(rule: str) -> str:
    """A grammar rule's name (corpus.grammar.RULES) in the current language, for a legend;
    the particles が and を are tokens and stay as they are."""
    names = {
        "time word": tr("time word"),
        "subject adjective": tr("subject adjective"),
        "subject": tr("subject"),
        "place adjective": tr("place adjective"),
        "place": tr("place"),
        "adverb": tr("adverb"),
        "verb": tr("verb"),
        "conjunction": tr("conjunction"),
        "end": tr("end"),
    }
    return names.get(rule, rule)


# The three groups notebook 08 reads the per-rule KL in: the particles and the end of a clause, what
# depends on the subject a few tokens back, and the subject itself. N_ marks the titles.
RULE_GROUPS = (
    (N_("the particles and the clause's end"), ("が", "を", "conjunction", "end")),
    (N_("depends on the subject"), ("place adjective", "place", "adverb", "verb")),
    (N_("the subject and what precedes it"), ("time word", "subject adjective", "subject")),
)


@course_font
def rule_kl_figure(history: TrainingHistory, *, kl_target: float | None = 0.01) -> Figure:
    """KL(true ‖ model) against the training step, one line per grammar rule (the mean over
    the held-out positions whose next token that rule produced), in three panels, one per
    group of RULE_GROUPS, each with the mean over all positions in grey; log scale."""
    if not history.kl_by_rule:
        raise ValueError(
            tr("history has no KL per rule: train with a held-out set from make_heldout")
        )
    figure = Canvas(figsize=(11.0, 4.2), dpi=100).figure
    axes = figure.subplots(1, 3, sharey=True)
    for ax, (title, rules) in zip(axes, RULE_GROUPS, strict=True):
        ax.plot(history.steps, history.kl, color="#aaaaaa", linewidth=5, alpha=0.6,
                label=tr("all positions"))  # fmt: skip
        for k, rule in enumerate(rules):
            ax.plot(
                history.steps,
                history.kl_by_rule[rule],
                color=RULE_COLOURS[k % len(RULE_COLOURS)],
                marker=RULE_MARKERS[k % len(RULE_MARKERS)],
                markersize=4,
                linewidth=1.6,
                label=rule_label(rule),
            )
        if kl_target is not None:
            ax.axhline(kl_target, color=RED, linestyle=(0, (2, 2)), linewidth=1,
                       label=tr("target {target}", target=kl_target))  # fmt: skip
        ax.set_yscale("log")
        ax.set_xlabel(tr("training step"))
        ax.set_title(tr(title), fontsize=10)
        ax.grid(True, which="major", alpha=0.3)
        ax.legend(fontsize=9, loc="upper right")
    axes[0].set_ylabel(tr("mean KL(true ‖ model), nats"))
    figure.suptitle(tr("KL per grammar rule: which predictions the model has learned, and when"))
    figure.tight_layout()
    return figure
