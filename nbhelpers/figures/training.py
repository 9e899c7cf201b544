"""Notebook 08's training curves: KL(true ‖ model) and the held-out loss against the step."""

from __future__ import annotations

from collections.abc import Mapping

from matplotlib.figure import Figure

from ..training import TrainingHistory
from .canvas import Canvas


def training_figure(
    history: TrainingHistory,
    kl_target: float = 0.01,
    baselines: Mapping[str, float] | None = None,
) -> Figure:
    """Two panels against the training step: KL(true ‖ model) on a log scale with the target
    and `baselines` ({name: KL}, drawn as horizontal lines), and the held-out loss above the
    entropy-rate floor."""
    figure = Canvas(figsize=(9.6, 3.8), dpi=100).figure
    kl_ax, loss_ax = figure.subplots(1, 2)
    kl_ax.plot(history.steps, history.kl, marker="o", markersize=3, color="#3b6ea8")
    kl_ax.axhline(kl_target, color="#b5495b", linestyle="--", label=f"target {kl_target} nats")
    # Models that see only the last few tokens, exactly: how far each stays from the truth.
    styles = (":", "-.", (0, (6, 3)), (0, (1, 1)))
    for (name, kl), style in zip((baselines or {}).items(), styles, strict=False):
        kl_ax.axhline(kl, color="#555555", linestyle=style, linewidth=1.2, label=f"{name} {kl:.3f}")
    kl_ax.set_yscale("log")
    kl_ax.set_xlabel("training step")
    kl_ax.set_ylabel("mean KL(true ‖ model), nats")
    kl_ax.set_title("the model's distributions converge to the truth")
    kl_ax.legend(fontsize=9, loc="lower left")
    loss_ax.plot(history.steps, history.heldout_loss, marker="o", markersize=3, label="held-out")
    loss_ax.plot(
        history.steps, history.train_loss, color="#e08a2c", alpha=0.7, label="training batches"
    )
    loss_ax.axhline(
        history.entropy_rate,
        color="black",
        linestyle="--",
        label=f"entropy rate {history.entropy_rate:.3f} (the floor)",
    )
    top = max(history.heldout_loss[0], history.entropy_rate) + 0.3
    loss_ax.set_ylim(history.entropy_rate - 0.1, min(top, history.entropy_rate + 1.5))
    loss_ax.set_xlabel("training step")
    loss_ax.set_ylabel("cross-entropy per token, nats")
    loss_ax.set_title("the loss approaches the floor")
    loss_ax.legend(fontsize=9)
    figure.tight_layout()
    return figure
