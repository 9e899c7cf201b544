"""Notebook 07's deep-stack measurements: per layer, the forward signal, the backward signal
and the weight gradients of a stack wired with or without residuals and LayerNorm."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from matplotlib.figure import Figure
from matplotlib.ticker import NullLocator

from ..experiments.deep_stack import StackProfile
from ..support.language import tr
from .bars import SERIES_COLOURS
from .canvas import Canvas
from .style import course_font

# One style per wiring, (residual, layer_norm, pre_ln): GPT-1's block drawn boldest.
STYLES = {
    (False, False, False): {"color": SERIES_COLOURS[3], "linestyle": "-", "linewidth": 1.6},
    (True, False, False): {"color": SERIES_COLOURS[1], "linestyle": "--", "linewidth": 1.8},
    (False, True, False): {"color": SERIES_COLOURS[2], "linestyle": "-.", "linewidth": 1.6},
    (True, True, False): {"color": SERIES_COLOURS[0], "linestyle": "-", "linewidth": 2.6,
                          "alpha": 0.8},
    (True, True, True): {"color": "#7a4fa3", "linestyle": ":", "linewidth": 2.2},
}  # fmt: skip
# The bottom row's window: where the variants that keep their scale live.
ZOOM = (1e-2, 1e2)


def panels() -> tuple:
    """(title, field, x label, first layer) of each column, in the language set now."""
    return (
        (tr("activation RMS of $h_l$"), "activation_rms", tr("layer $l$ ($h_0$: the input)"), 0),
        (tr(r"gradient reaching $h_l$: $\|\partial\,$loss$/\partial h_l\|$"),
         "upstream_gradient", tr("layer $l$"), 0),
        (tr("weight gradient of block $l$"), "weight_gradient", tr("block $l$"), 1),
    )  # fmt: skip


def variant_label(name: str) -> str:
    """A variant's name (deep_stack.VARIANTS) as the legend shows it."""
    labels = {
        "plain": tr("plain"),
        "residual only": tr("residual only"),
        "LayerNorm only": tr("LayerNorm only"),
        "residual + LayerNorm (GPT-1)": tr("residual + LayerNorm (GPT-1)"),
        "pre-LN + final LayerNorm (GPT-2)": tr("pre-LN + final LayerNorm (GPT-2)"),
    }
    return labels.get(name, name)


def check_profiles(profiles) -> list[StackProfile]:
    if isinstance(profiles, StackProfile):
        profiles = [profiles]
    if not isinstance(profiles, Sequence) or not profiles:
        raise ValueError(
            tr(
                "profiles must be a non-empty list of StackProfile, got {profiles!r}",
                profiles=profiles,
            )
        )
    for profile in profiles:
        if not isinstance(profile, StackProfile):
            raise TypeError(
                tr(
                    "profiles must hold StackProfile (from compare_stacks), got {profile_type}",
                    profile_type=type(profile).__name__,
                )
            )
    depths = {profile.depth for profile in profiles}
    if len(depths) > 1:
        raise ValueError(
            tr(
                "profiles must all have the same depth, got depths {sorted_depths}",
                sorted_depths=sorted(depths),
            )
        )
    return list(profiles)


def style_of(profile: StackProfile) -> dict:
    return STYLES[(profile.residual, profile.layer_norm, profile.pre_ln)]


def decade_ticks(limits: tuple[float, float], most: int = 6) -> list[float]:
    """Powers of ten inside `limits`, every k-th decade so that at most `most` remain (none
    when no power of ten lies inside: matplotlib's own ticks are kept then)."""
    low, high = (int(np.ceil(np.log10(limits[0]))), int(np.floor(np.log10(limits[1]))))
    step = max(1, int(np.ceil((high - low + 1) / most)))
    step = next(s for s in (1, 2, 5, 10, 20, 30, 50, 100, step) if s >= step)
    return [10.0**k for k in range(high - high % step, low - 1, -step)]


def note_hidden(ax, profiles: list[StackProfile], field: str) -> None:
    """Name the variants whose curve leaves the zoom window downwards, in their colour."""
    lines = [
        (
            tr("{name}: below {limit:g}", name=variant_label(profile.name), limit=ZOOM[0]),
            style_of(profile)["color"],
        )
        for profile in profiles
        if float(getattr(profile, field).min()) < ZOOM[0]
    ]
    for k, (text, colour) in enumerate(lines):
        ax.text(0.97, 0.05 + 0.09 * k, text, transform=ax.transAxes, ha="right", va="bottom",
                fontsize=9, color=colour)  # fmt: skip


@course_font
def deep_stack_figure(profiles: Sequence[StackProfile]) -> Figure:
    """Three quantities per layer on log scales, one curve per variant. Top row: the full
    range (the plain stack's numbers fall by about a hundred decades); bottom row: the same
    curves in the window 1e-2 .. 1e2, where the other variants can be told apart."""
    profiles = check_profiles(profiles)
    depth = profiles[0].depth
    figure = Canvas(figsize=(11.0, 6.6), dpi=100).figure
    axes = figure.subplots(2, 3, sharex=True)
    for column, (title, field, xlabel, first) in enumerate(panels()):
        for row in range(2):
            ax = axes[row, column]
            for profile in profiles:
                # float64 as measured: float32 would flush the plain stack's 1e-90s to 0
                values = getattr(profile, field).detach().cpu().double().numpy()
                layers = np.arange(first, first + len(values))
                ax.plot(layers, values, label=variant_label(profile.name), **style_of(profile))
            ax.set_yscale("log")
            ax.grid(True, which="major", alpha=0.3)
            ax.tick_params(labelsize=9)
            if row == 0:
                ax.set_title(title, fontsize=10)
                if ticks := decade_ticks(ax.get_ylim()):
                    ax.set_yticks(ticks)
                    ax.yaxis.set_minor_locator(NullLocator())
            else:
                ax.set_ylim(*ZOOM)
                ax.set_xlabel(xlabel, fontsize=10)
                note_hidden(ax, profiles, field)
        axes[1, column].set_xlim(0, depth)
    axes[0, 0].set_ylabel(tr("all variants (full range)"), fontsize=10)
    axes[1, 0].set_ylabel(tr("zoom: {low:g} to {high:g}", low=ZOOM[0], high=ZOOM[1]), fontsize=10)
    handles, labels = axes[0, 0].get_legend_handles_labels()
    figure.legend(handles, labels, loc="lower center", ncol=min(4, len(labels)), fontsize=9,
                  frameon=False)  # fmt: skip
    stds = sorted({profile.init_std for profile in profiles})
    weights = ", ".join(f"N(0, {std:g}²)" for std in stds)
    figure.suptitle(
        tr(
            "A stack of {depth} GPT-1 blocks at initialisation, weights from {weights}",
            depth=depth,
            weights=weights,
        ),
        fontsize=11,
    )
    figure.tight_layout(rect=(0, 0.05, 1, 1))
    return figure
