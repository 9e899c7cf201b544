"""Log-log figures: how a quantity grows with a size (d_k in notebook 01, n in notebook 10).

On log-log axes a power law c·n^p is a straight line of slope p, so dashed guide lines of
slope 1 (O(n)) and 2 (O(n²)) let the eye read off how each measured curve grows.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from ..support.language import tr
from .bars import SERIES_COLOURS
from .canvas import DPI, MIN_FONT_PT, to_numpy
from .style import BLOCKED, course_font

_SUPERSCRIPTS = str.maketrans("0123456789", "⁰¹²³⁴⁵⁶⁷⁸⁹")


def _finish_loglog(
    figure: Figure, ax, *, xlabel: str, ylabel: str, title: str, log_y: bool = True
) -> None:
    """The axes styling every figure here shares: sizes in powers of two along x."""
    ax.set_xscale("log", base=2)
    if log_y:
        ax.set_yscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(fontsize=MIN_FONT_PT)
    figure.tight_layout()


@course_font
def loglog_figure(
    series: Mapping[str, tuple[Sequence[float], Sequence[float]]],
    *,
    ylabel: str,
    title: str = "",
    guides: Mapping[int, str] | Sequence[int] = (1, 2),
    figsize: tuple[float, float] = (6.0, 4.0),
) -> Figure:
    """One line per series name -> (n values, measured values); zero or missing values (a
    cost too small to measure) are left out.

    `guides` maps a slope to the series whose first point its dashed guide starts from
    (a plain sequence of slopes starts them all from the first series)."""
    if not series:
        raise ValueError(tr("series must hold at least one name -> (ns, values)"))
    figure = Figure(figsize=figsize, dpi=DPI)
    FigureCanvasAgg(figure)
    ax = figure.add_subplot()
    anchors = {}
    for k, (name, (ns, values)) in enumerate(series.items()):
        ns = np.asarray(ns, dtype=float)
        values = np.asarray([np.nan if v is None else v for v in values], dtype=float)
        if ns.shape != values.shape:
            raise ValueError(
                tr(
                    "series {name!r}: {ns_size} n values but {values_size} measurements",
                    name=name,
                    ns_size=ns.size,
                    values_size=values.size,
                )
            )
        keep = values > 0
        if not keep.any():
            continue
        colour = SERIES_COLOURS[k % len(SERIES_COLOURS)]
        # each later series thinner, with a smaller marker of another shape: two paths that
        # measure the same (a wrapper and the kernel it calls) show as nested, not hidden
        ax.plot(ns[keep], values[keep], marker="osD^v"[k % 5], markersize=max(3.0, 8.0 - 1.5 * k),
                linewidth=max(1.0, 2.6 - 0.5 * k), color=colour, label=name)  # fmt: skip
        anchors[name] = (ns[keep][0], values[keep][0], max(ns[keep][-1], 2 * ns[keep][0]))
    if not isinstance(guides, Mapping):
        guides = {slope: next(iter(series)) for slope in guides}
    for slope, name in guides.items():
        if name not in anchors:
            continue
        n0, v0, n1 = anchors[name]
        grid = np.array([n0, n1])
        label = "O(n)" if slope == 1 else f"O(n{str(slope).translate(_SUPERSCRIPTS)})"
        style = "--" if slope == 1 else ":"
        ax.plot(grid, v0 * (grid / n0) ** slope, style, color="grey", linewidth=1.2, label=label)
    _finish_loglog(figure, ax, xlabel=tr("sequence length n"), ylabel=ylabel, title=title)
    return figure


@course_font
def against_dk_figure(
    d_ks: Sequence[int],
    series: Mapping[str, Sequence[float]],
    *,
    ylabel: str,
    title: str = "",
    theory: Mapping[str, Sequence[float]] | None = None,
    band: tuple[str, Sequence[float], Sequence[float]] | None = None,
    log_y: bool = True,
    figsize: tuple[float, float] = (5.6, 3.6),
    dpi: int = DPI,
) -> Figure:
    """A new Figure: each series against d_k on log-log axes, `theory` curves dashed.

    Power laws are straight lines there: a quantity growing like d_k has slope 1, a constant
    one is flat. `band` = (name, lower, upper) shades a range, such as the spread a sampled
    quantity may have; `log_y=False` keeps the y axis linear, where a small spread shows.
    """
    d_ks = np.asarray(d_ks, dtype=float)
    if d_ks.ndim != 1 or d_ks.size == 0 or (d_ks <= 0).any():
        raise ValueError(
            tr("d_ks must be a non-empty 1-D sequence of positive sizes, got {d_ks}", d_ks=d_ks)
        )
    figure = Figure(figsize=figsize, dpi=dpi)
    FigureCanvasAgg(figure)
    ax = figure.add_subplot()
    if band is not None:
        name, lower, upper = band
        ax.fill_between(d_ks, to_numpy(lower).reshape(-1), to_numpy(upper).reshape(-1),
                        color=SERIES_COLOURS[0], alpha=0.15, lw=0, label=name)  # fmt: skip
    curves = [(name, values, False) for name, values in series.items()]
    curves += [(name, values, True) for name, values in (theory or {}).items()]
    # Each theory line has its own style, so that two of them never read as one.
    theory_styles = iter([("--", BLOCKED), (":", "#222222"), ("-.", "#9a6fb0")] * 4)
    for k, (name, values, dashed) in enumerate(curves):
        values = to_numpy(values).reshape(-1)
        if values.shape != d_ks.shape:
            raise ValueError(
                tr(
                    "series {name!r} has {values_size} values but there are {d_ks_size} d_k values",
                    name=name,
                    values_size=values.size,
                    d_ks_size=d_ks.size,
                )
            )
        if dashed:
            style, colour = next(theory_styles)
            # thin and on top: a measured series that follows it exactly cannot hide it
            ax.plot(d_ks, values, linestyle=style, color=colour, linewidth=1.8, alpha=0.9,
                    label=name, zorder=4)  # fmt: skip
        else:
            colour = SERIES_COLOURS[k % len(SERIES_COLOURS)]
            ax.plot(d_ks, values, marker="o", markersize=4, label=name, color=colour, zorder=3)
    _finish_loglog(figure, ax, xlabel="$d_k$", ylabel=ylabel, title=title, log_y=log_y)
    return figure
