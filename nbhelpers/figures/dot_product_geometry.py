"""Notebook 01's picture of q·k = |q| |k| cos θ: two 2-D arrows, the angle between them and
the projection of k onto q's direction; beside them, the score as θ turns, a cosine whose
height |q||k| the lengths set. Angle sets the sign, lengths set the size."""

from __future__ import annotations

import math

import numpy as np
from matplotlib.figure import Figure

from ..support.language import tr
from ..support.validation import is_number
from .bars import SERIES_COLOURS
from .canvas import BlitCanvas, to_numpy
from .style import GREY, INK, LIGHT_GREY, course_font

Q_COLOUR, K_COLOUR = SERIES_COLOURS[0], SERIES_COLOURS[1]
POSITIVE_SHADE, NEGATIVE_SHADE = "#e6f2e8", "#f7e4e6"
# Room around the longer arrow, so that the tip labels stay inside the panel.
EXTENT_MARGIN = 1.3
_ANGLES = np.linspace(-180.0, 180.0, 361)  # the score curve's θ grid, in degrees


def check_vector_2d(name: str, vector) -> np.ndarray:
    """A finite, non-zero vector of shape (2,) as floats (a zero vector has no angle)."""
    try:
        array = to_numpy(vector)
    except (TypeError, ValueError):
        raise TypeError(
            tr(
                "{name} must be a 2-D vector of two numbers (shape (2,)), got {vector_type}",
                name=name,
                vector_type=type(vector).__name__,
            )
        ) from None
    if array.shape != (2,):
        raise ValueError(
            tr(
                "{name} must be a 2-D vector of shape (2,), got shape {array_shape}",
                name=name,
                array_shape=array.shape,
            )
        )
    if not np.isfinite(array).all():
        raise ValueError(
            tr(
                "{name} must hold finite numbers, got {values}",
                name=name,
                values=array.tolist(),
            )
        )
    if not array.any():
        raise ValueError(
            tr("{name} must not be the zero vector: its angle θ is undefined", name=name)
        )
    return array


def _check_limit(name: str, value, *, at_least: float, why: str) -> float:
    if not is_number(value) or not math.isfinite(value) or value <= 0:
        raise ValueError(
            tr("{name} must be a positive finite number, got {value!r}", name=name, value=value)
        )
    if value < at_least:
        raise ValueError(
            tr(
                "{name} must be at least {at_least:.3g} ({why}), got {value!r}",
                name=name,
                at_least=at_least,
                why=why,
                value=value,
            )
        )
    return float(value)


def signed_angle(q: np.ndarray, k: np.ndarray) -> float:
    """The angle of k relative to q in degrees, in (-180, 180]: positive counter-clockwise."""
    cross = q[0] * k[1] - q[1] * k[0]
    angle = math.degrees(math.atan2(cross, float(q @ k)))
    return 180.0 if angle <= -180.0 else angle  # atan2(-0.0, -1) is -180


class DotProductGeometryCanvas(BlitCanvas):
    """The arrow panel and the score-against-θ panel; `draw(q, k)` moves their artists.

    Every artist is made once here, and a draw only changes their data and text, so that a
    slider-driven explorer redraws quickly and the axes never jump. With `blit=True` (for
    explorers) `png()` renders the axes, ticks and labels once per pair of limits and then
    only paints the moving artists over them; with `blit=False` every artist is an ordinary
    one, so the figure renders completely wherever it goes (show_figure, savefig).
    """

    def __init__(
        self, *, figsize: tuple[float, float] = (10.0, 4.6), dpi: int = 100, blit: bool = False
    ):
        super().__init__(figsize=figsize, dpi=dpi, blit=blit)
        self._limits: tuple | None = None  # (extent, score_limit) of the last draw
        grid = self.figure.add_gridspec(
            1, 2, width_ratios=(1, 1.3), left=0.06, right=0.98, bottom=0.14, top=0.84,
            wspace=0.28,
        )  # fmt: skip
        self.arrow_ax = self.figure.add_subplot(grid[0, 0])
        self.score_ax = self.figure.add_subplot(grid[0, 1])
        self._build_arrow_panel()
        self._build_score_panel()
        self.changing(
            self._q_line, self._drop, self._projection, self._projection_label, self._arc,
            self._angle_label, *self._arrows.values(), *self._tip_labels.values(),
            self._formula, *self._bounds, self._bound_label, self._curve, self._now_line,
            self._marker, self._marker_label,
        )  # fmt: skip

    def _build_arrow_panel(self) -> None:
        ax = self.arrow_ax
        ax.set_aspect("equal", adjustable="box")
        ax.axhline(0, color="#cccccc", lw=0.8, zorder=0)
        ax.axvline(0, color="#cccccc", lw=0.8, zorder=0)
        # q's direction as a line through the origin: the projection of k lies on it.
        (self._q_line,) = ax.plot([], [], ":", color=Q_COLOUR, lw=1, zorder=1)
        (self._drop,) = ax.plot([], [], "--", color="#808080", lw=1.2, zorder=2)
        (self._projection,) = ax.plot([], [], "--", color=K_COLOUR, lw=2.5, zorder=3)
        self._projection_label = ax.text(0, 0, "", fontsize=9, color="#8a4f12", zorder=6)
        (self._arc,) = ax.plot([], [], color=INK, lw=1.2, zorder=4)
        self._angle_label = ax.text(0, 0, "", fontsize=12, ha="center", va="center", zorder=6)
        arrow = {"arrowstyle": "-|>", "lw": 2.2, "mutation_scale": 18, "shrinkA": 0, "shrinkB": 0}
        self._arrows, self._tip_labels = {}, {}
        for name, colour in (("q", Q_COLOUR), ("k", K_COLOUR)):
            self._arrows[name] = ax.annotate(
                "", xy=(1, 0), xytext=(0, 0), arrowprops={**arrow, "color": colour}, zorder=5
            )
            self._tip_labels[name] = ax.text(
                0, 0, f"${name}$", fontsize=13, color=colour, ha="center", va="center", zorder=6
            )
        ax.set_xlabel(tr("feature 0"))
        ax.set_ylabel(tr("feature 1"))
        self._formula = ax.set_title("", fontsize=10)

    def _build_score_panel(self) -> None:
        ax = self.score_ax
        self._positive = ax.axhspan(0, 1, color=POSITIVE_SHADE, zorder=0)
        self._negative = ax.axhspan(-1, 0, color=NEGATIVE_SHADE, zorder=0)
        ax.axhline(0, color=GREY, lw=0.8, zorder=1)
        ax.text(-172, 0, " " + tr("positive"), fontsize=9, color="#2f6b3a", va="bottom", zorder=2)
        ax.text(-172, 0, " " + tr("negative"), fontsize=9, color="#8c2f3f", va="top", zorder=2)
        self._bounds = [
            ax.axhline(0, color=LIGHT_GREY, ls="--", lw=0.9, zorder=1) for _ in range(2)
        ]
        self._bound_label = ax.annotate(
            "", xy=(178, 0), xytext=(0, -3), textcoords="offset points", fontsize=9,
            color=GREY, ha="right", va="top",
        )  # fmt: skip
        (self._curve,) = ax.plot(_ANGLES, np.zeros_like(_ANGLES), color=K_COLOUR, lw=2, zorder=3)
        self._now_line = ax.axvline(0, color=INK, ls=":", lw=1, zorder=2)
        (self._marker,) = ax.plot([0], [0], "o", color=INK, ms=8, zorder=4)
        box = {"boxstyle": "round,pad=0.25", "facecolor": "white", "edgecolor": LIGHT_GREY}
        self._marker_label = ax.annotate(
            "", xy=(0, 0), xytext=(10, 10), textcoords="offset points", fontsize=10, bbox=box,
            zorder=5,
        )  # fmt: skip
        ax.set_xlim(-180, 180)
        ax.set_xticks([-180, -90, 0, 90, 180])
        ax.set_xticklabels(["-180°", "-90°", "0°", "90°", "180°"])
        ax.set_xlabel(tr(r"angle $\theta$ of $k$ from $q$"))
        ax.set_ylabel(tr(r"score $q\cdot k$"))
        ax.set_title(tr(r"score as $\theta$ turns: $|q|\,|k|\,\cos\theta$"), fontsize=11)
        ax.grid(True, axis="x", alpha=0.3)

    def draw(
        self,
        q,
        k,
        *,
        extent: float | None = None,
        score_limit: float | None = None,
        title: str | None = None,
    ) -> Figure:
        """q, k: 2-D vectors of shape (2,). `extent` is the arrow panel's half-width and
        `score_limit` the score panel's half-height; give them fixed values to keep the axes
        still while the vectors change (by default they fit these two vectors)."""
        q, k = check_vector_2d("q", q), check_vector_2d("k", k)
        q_len, k_len = float(np.hypot(*q)), float(np.hypot(*k))
        longer = max(q_len, k_len)
        if extent is None:
            extent = EXTENT_MARGIN * longer
        extent = _check_limit("extent", extent, at_least=longer, why="the longer vector's length")
        product = q_len * k_len
        if score_limit is None:
            score_limit = 1.2 * product
        score_limit = _check_limit(
            "score_limit", score_limit, at_least=product, why="|q||k|, the largest score"
        )
        self._limits = (extent, score_limit)
        theta = signed_angle(q, k)
        score = float(q @ k)
        self._draw_arrows(q, k, q_len, k_len, theta, extent)
        self._draw_scores(product, theta, score, score_limit)
        cos = math.cos(math.radians(theta))
        self._formula.set_text(
            (title + "\n" if title else "")
            + r"$q\cdot k = |q|\,|k|\,\cos\theta$"
            + f"\n= {q_len:.2f} × {k_len:.2f} × cos({theta:.0f}°)"
            + f" = {q_len:.2f} × {k_len:.2f} × {format_factor(cos)} ≈ {format_number(score)}"
        )
        return self.figure

    def shows(self):
        return self._limits

    def _draw_arrows(self, q, k, q_len, k_len, theta, extent) -> None:
        q_hat = q / q_len
        self.arrow_ax.set_xlim(-extent, extent)
        self.arrow_ax.set_ylim(-extent, extent)
        reach = 2 * extent  # past the panel's corners
        self._q_line.set_data(
            [-reach * q_hat[0], reach * q_hat[0]], [-reach * q_hat[1], reach * q_hat[1]]
        )
        foot = float(k @ q_hat) * q_hat  # the projection of k onto q's direction
        self._drop.set_data([k[0], foot[0]], [k[1], foot[1]])
        # The projection is drawn beside q's line, like a dimension line on a drawing, on
        # the side away from k, so that q's arrow does not hide it.
        normal = np.array([-q_hat[1], q_hat[0]])
        side = -1.0 if float(k @ normal) >= 0 else 1.0
        offset = side * 0.04 * extent * normal
        self._projection.set_data(
            [offset[0], foot[0] + offset[0]], [offset[1], foot[1] + offset[1]]
        )
        _place(self._projection_label, foot / 2 + side * 0.11 * extent * normal, side * normal)
        self._projection_label.set_text(rf"$|k|\,\cos\theta$ = {format_number(float(k @ q_hat))}")
        for name, vector, length in (("q", q, q_len), ("k", k, k_len)):
            self._arrows[name].xy = tuple(vector)
            self._tip_labels[name].set_position(vector + 0.1 * extent * vector / length)
        # q's label is moved off its dotted line, away from k.
        self._tip_labels["q"].set_position(
            q + 0.08 * extent * q_hat + side * 0.06 * extent * normal
        )
        # The arc from q's direction to k's, at a radius inside both arrows.
        start = math.degrees(math.atan2(q[1], q[0]))
        radius = float(np.clip(0.35 * min(q_len, k_len), 0.08 * extent, 0.25 * extent))
        turn = np.radians(start + np.linspace(0, theta, 60))
        self._arc.set_data(radius * np.cos(turn), radius * np.sin(turn))
        middle = math.radians(start + theta / 2)
        outwards = np.array([math.cos(middle), math.sin(middle)])
        # Just "θ": a number would not fit between short or close arrows (the title has it).
        self._angle_label.set_position((radius + 0.07 * extent) * outwards)
        self._angle_label.set_text(r"$\theta$")

    def _draw_scores(self, product, theta, score, score_limit) -> None:
        ax = self.score_ax
        ax.set_ylim(-score_limit, score_limit)
        self._positive.set_y(0)
        self._positive.set_height(score_limit)
        self._negative.set_y(-score_limit)
        self._negative.set_height(score_limit)
        self._curve.set_ydata(product * np.cos(np.radians(_ANGLES)))
        for bound, sign in zip(self._bounds, (1, -1), strict=True):
            bound.set_ydata([sign * product, sign * product])
        self._bound_label.xy = (178, product)
        self._bound_label.set_text(f"|q||k| = {product:.2f}")
        self._now_line.set_xdata([theta, theta])
        self._marker.set_data([theta], [score])
        # The value's label beside the marker, towards the middle of the panel.
        self._marker_label.set_text(f"q·k = {format_number(score)}")
        self._marker_label.xy = (theta, score)
        right, up = theta < 60, score < 0.5 * score_limit
        self._marker_label.set_position((10 if right else -10, 10 if up else -10))
        self._marker_label.set_ha("left" if right else "right")
        self._marker_label.set_va("bottom" if up else "top")


def format_number(value: float, digits: int = 2) -> str:
    """`digits` decimals, never "-0.00" (cos 90° is -4e-17 in floating point)."""
    text = f"{value:.{digits}f}"
    return text[1:] if text.startswith("-") and float(text) == 0 else text


def format_factor(value: float, digits: int = 2) -> str:
    """A factor as written in a product: (-0.34) in brackets, 0.74 bare."""
    text = format_number(value, digits)
    return f"({text})" if text.startswith("-") else text


def _place(text, anchor, direction) -> None:
    """Put `text` at `anchor`, aligned so that it extends along `direction` (a unit vector)
    away from the anchor: off the line or arc it labels instead of across it."""
    text.set_position(tuple(anchor))
    text.set_ha("left" if direction[0] > 0.3 else "right" if direction[0] < -0.3 else "center")
    text.set_va("bottom" if direction[1] > 0.3 else "top" if direction[1] < -0.3 else "center")


@course_font
def dot_product_geometry_figure(q, k, **draw_options) -> Figure:
    """A new Figure of q·k = |q| |k| cos θ for two 2-D vectors; see
    DotProductGeometryCanvas.draw for the options (extent, score_limit, title)."""
    return DotProductGeometryCanvas().draw(q, k, **draw_options)
