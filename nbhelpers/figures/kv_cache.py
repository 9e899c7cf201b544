"""Notebook 10's KV cache timings: time per generated token with and without the cache, and
the speed-up, against the number of tokens generated."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
from matplotlib.figure import Figure
from matplotlib.ticker import LogLocator, MaxNLocator, NullFormatter, ScalarFormatter

from ..support.language import tr
from .bars import SERIES_COLOURS
from .canvas import Canvas
from .style import course_font

RECOMPUTE_STYLE = dict(linestyle="-", marker="o")
CACHED_STYLE = dict(linestyle="--", marker="s")


def _series(name: str, values, count: int) -> np.ndarray:
    values = np.asarray(values, dtype=float)
    if values.shape != (count,):
        raise ValueError(
            tr(
                "{name} has {values_size} values but there are {count} lengths",
                name=name,
                values_size=values.size,
                count=count,
            )
        )
    if not (np.isfinite(values).all() and (values > 0).all()):
        raise ValueError(
            tr(
                "{name} must hold positive times in seconds, got {times}",
                name=name,
                times=values.tolist(),
            )
        )
    return values


@course_font
def kv_cache_figure(
    lengths: Sequence[int],
    recompute: Mapping[str, Sequence[float]],
    cached: Mapping[str, Sequence[float]],
    *,
    context: int | None = None,
) -> Figure:
    """Two panels against the number of generated tokens N: the time per generated token
    (total time / N, log scale) when every step recomputes everything (solid) and with the
    KV cache (dashed), and the speed-up recompute / cached, with 1x (no gain) marked.

    `recompute` and `cached` map the same labels (one per setting, such as the batch size)
    to one time in seconds per length; `context` (the model's n_ctx) sets the x range."""
    lengths = np.asarray(lengths, dtype=float)
    if lengths.ndim != 1 or lengths.size < 2 or not (lengths > 0).all():
        raise ValueError(
            tr("lengths must be at least 2 positive token counts, got {lengths}", lengths=lengths)
        )
    if not recompute or set(recompute) != set(cached):
        raise ValueError(
            tr(
                "recompute and cached must have the same labels, got {list_recompute} and "
                "{list_cached}",
                list_recompute=list(recompute),
                list_cached=list(cached),
            )
        )
    figure = Canvas(figsize=(10.0, 4.6), dpi=100).figure
    time_ax, speed_ax = figure.subplots(1, 2)
    for k, label in enumerate(recompute):
        colour = SERIES_COLOURS[k % len(SERIES_COLOURS)]
        slow = _series(f"recompute[{label!r}]", recompute[label], lengths.size)
        fast = _series(f"cached[{label!r}]", cached[label], lengths.size)
        time_ax.plot(
            lengths,
            slow * 1e3,
            color=colour,
            label=tr("{label}: recompute", label=label),
            **RECOMPUTE_STYLE,
        )
        time_ax.plot(
            lengths,
            fast * 1e3,
            color=colour,
            label=tr("{label}: KV cache", label=label),
            **CACHED_STYLE,
        )
        speed_ax.plot(lengths, slow / fast, color=colour, marker="o", label=label)
    speed_ax.axhline(1.0, color="grey", linestyle=":", linewidth=1.2, label=tr("1x: no gain"))
    steps = np.arange(1, lengths.max() + 1)
    speed_ax.plot(  # what counting rows predicts: recomputing runs (N+1)/2 times as many
        steps, (steps + 1) / 2, color="black", linestyle="--", linewidth=1.0,
        label=tr("(N+1)/2: rows recomputed / rows cached"),
    )  # fmt: skip
    right = context if context is not None else lengths.max()
    for ax in (time_ax, speed_ax):
        ax.set_xlim(0, right + 0.5)
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_xlabel(
            tr("generated tokens N (the context holds {context})", context=context)
            if context
            else tr("generated tokens N")
        )
        ax.grid(True, alpha=0.3)
        # below the axes: no curve can run under the legend
        ax.legend(fontsize=9, loc="upper center", bbox_to_anchor=(0.5, -0.16), ncol=2)
    time_ax.set_yscale("log")
    # plain numbers (0.2, 0.5, 1, 2, 5 ms) rather than powers of ten with mantissas
    time_ax.yaxis.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0)))
    time_ax.yaxis.set_major_formatter(ScalarFormatter())
    time_ax.yaxis.set_minor_formatter(NullFormatter())
    time_ax.set_ylabel(tr("time per generated token (ms)"))
    time_ax.set_title(tr("Per step: the cache's time stays flat"))
    speed_ax.set_ylim(0, max(2.0, 1.15 * float(speed_ax.get_ylim()[1])))
    speed_ax.set_ylabel(tr("speed-up (recompute / KV cache)"))
    speed_ax.set_title(tr("The cache's speed-up"))
    figure.tight_layout()
    return figure
