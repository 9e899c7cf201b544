"""Notebook 05's trained heads: each head's attention map, titled with what it attends to,
and the accuracy of h = 1 against h = 2 along training."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import matplotlib
import numpy as np
import torch
from matplotlib.figure import Figure

from ..experiments.head_specialisation import head_shares
from ..support.language import tr
from .canvas import DPI, MASKED_COLOUR, MIN_FONT_PT, Canvas, annotation_fits, to_numpy
from .style import RED, course_font

ROLE_COLOURS = {"previous token": "#1f5fa8", "first token": RED}


def _share_lines(previous: float, first: float) -> str:
    """'0.99 of its weight on the previous token' above the other share, the larger first."""
    ranked = sorted((("previous token", previous), ("first token", first)), key=lambda r: -r[1])
    (main, main_share), (other, other_share) = ranked
    if main == "previous token":
        return tr(
            "{main:.2f} of its weight on the previous token\n{other:.2f} on the first token",
            main=main_share,
            other=other_share,
        )
    return tr("{main:.2f} of its weight on the first token\n{other:.2f} on the previous token",
              main=main_share, other=other_share)  # fmt: skip


def _cell_text(weight: float) -> str:
    """Two decimals without the leading zero (.96), and 0 and 1 written short: narrow enough
    for 9-pt numbers in cells a third of an inch wide, and the many near-0 cells stay quiet."""
    shown = f"{weight:.2f}"
    return {"0.00": "0", "1.00": "1"}.get(shown, shown.removeprefix("0"))


@course_font
def specialised_heads_figure(
    weights, names: Sequence[str] | None = None, *, causal: bool = True
) -> Figure:
    """Side-by-side attention maps (queries i x keys j) of k heads, weights (k, n, n), each
    titled with its name and the measured shares of its weight on the previous token (key
    i-1) and on the first token (key 0), from head_shares. With `causal`, the keys after
    each query are greyed out. Cells show their weight (.96 for 0.96; 0 and 1 written
    short) where a 9-pt number fits."""
    values = to_numpy(weights)
    if values.ndim != 3 or values.shape[1] != values.shape[2]:
        raise ValueError(
            tr(
                "weights must be (k, n, n), one square attention map per head, got shape "
                "{values_shape}",
                values_shape=values.shape,
            )
        )
    k, n, _ = values.shape
    if names is None:
        names = [tr("head {k}", k=i) for i in range(k)]
    names = [str(name) for name in names]
    if len(names) != k:
        raise ValueError(
            tr(
                "names has {len_names} entries but weights holds {k} heads",
                len_names=len(names),
                k=k,
            )
        )
    if not isinstance(causal, bool):
        raise TypeError(tr("causal must be True or False, got {causal!r}", causal=causal))
    shares = head_shares(torch.as_tensor(values, dtype=torch.float64))
    blocked = np.triu(np.ones((n, n), dtype=bool), 1) if causal else np.zeros((n, n), bool)
    figure = Canvas(figsize=(3.2 * k + 0.9, 4.2), dpi=DPI).figure
    axes = figure.subplots(1, k, squeeze=False)[0]
    figure.subplots_adjust(left=0.07, right=0.9, bottom=0.12, top=0.83, wspace=0.28)
    cmap = matplotlib.colormaps["viridis"].with_extremes(bad=MASKED_COLOUR)
    for ax, matrix, name, share in zip(axes, values, names, shares, strict=True):
        image = ax.imshow(
            np.ma.masked_array(matrix, mask=blocked), cmap=cmap, vmin=0.0, vmax=1.0,
            interpolation="nearest",
        )  # fmt: skip
        ax.set_xticks(range(n))
        ax.set_yticks(range(n))
        ax.tick_params(length=0, labelsize=MIN_FONT_PT)
        ax.set_xlabel(tr("key position j (0: the subject)"), fontsize=MIN_FONT_PT + 1)
        ax.set_title(
            f"{name}\n{_share_lines(share.previous, share.first)}",
            fontsize=MIN_FONT_PT + 1,
            color=ROLE_COLOURS[share.role],
        )
    axes[0].set_ylabel(tr("query position i"), fontsize=MIN_FONT_PT + 1)
    if annotation_fits(axes[0], n, n, sample=".00"):
        rgba = cmap(np.clip(values, 0.0, 1.0))
        light = rgba[..., :3] @ np.array([0.299, 0.587, 0.114]) > 0.5
        for index, ax in enumerate(axes):
            for i, j in zip(*np.nonzero(~blocked), strict=True):
                ax.text(
                    j, i, _cell_text(values[index, i, j]), ha="center", va="center",
                    fontsize=MIN_FONT_PT, color="black" if light[index, i, j] else "white",
                )  # fmt: skip
    colorbar = figure.colorbar(image, ax=list(axes), fraction=0.03, pad=0.02)
    colorbar.set_label(tr("attention weight"), fontsize=MIN_FONT_PT + 1)
    colorbar.ax.tick_params(labelsize=MIN_FONT_PT)
    return figure


@course_font
def accuracy_by_step_figure(curves: Mapping[str, tuple[Sequence[int], Sequence[float]]]) -> Figure:
    """Held-out accuracy against the training step, one line per {label: (steps, accuracy)},
    e.g. h = 1 against h = 2 trained with the same budget."""
    if not isinstance(curves, Mapping) or not curves:
        raise ValueError(tr("curves must be a non-empty mapping {label: (steps, accuracy)}"))
    figure = Canvas(figsize=(5.6, 3.4), dpi=DPI).figure
    ax = figure.subplots()
    for (label, (steps, accuracy)), marker in zip(curves.items(), "os^dv", strict=False):
        steps, accuracy = list(steps), list(accuracy)
        if len(steps) != len(accuracy) or not steps:
            raise ValueError(
                tr(
                    "curves[{label!r}] must be (steps, accuracy) of one non-zero length, got "
                    "{len_steps} steps and {len_accuracy} accuracies",
                    label=label,
                    len_steps=len(steps),
                    len_accuracy=len(accuracy),
                )
            )
        ax.plot(steps, accuracy, marker=marker, markersize=3.5, label=str(label))
    ax.set_ylim(-0.02, 1.04)
    ax.set_xlabel(tr("training step"), fontsize=MIN_FONT_PT + 1)
    ax.set_ylabel(tr("held-out accuracy\n(both tokens right)"), fontsize=MIN_FONT_PT + 1)
    ax.tick_params(labelsize=MIN_FONT_PT)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=MIN_FONT_PT + 1, loc="center right")
    figure.tight_layout()
    return figure
