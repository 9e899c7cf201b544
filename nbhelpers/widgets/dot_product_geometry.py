"""Notebook 01's geometry explorer: turn k around q and stretch either arrow, and watch
q·k = |q| |k| cos θ follow: the angle sets the sign, the lengths set the size."""

from __future__ import annotations

import math

import ipywidgets as widgets
import numpy as np

from ..figures.dot_product_geometry import (
    EXTENT_MARGIN,
    DotProductGeometryCanvas,
    check_vector_2d,
    format_factor,
    format_number,
)
from ..support.language import tr
from ..support.validation import is_number
from .base import FigureExplorer
from .readout import markup

D_K = 2  # the vectors here have two components


def _check_range(name: str, value, low: float, high: float) -> float:
    if not is_number(value) or not low <= value <= high:
        raise ValueError(
            tr(
                "{name} must be a number in [{low:g}, {high:g}], got {value!r}",
                name=name,
                low=low,
                high=high,
                value=value,
            )
        )
    return float(value)


class DotProductGeometryExplorer(FigureExplorer):
    """A query q at a fixed direction and a key k at angle θ (degrees) from it; sliders
    set θ, |q| and |k|. The axes stay fixed at the largest lengths the sliders allow, so
    the picture does not jump while a slider moves."""

    def __init__(
        self,
        *,
        angle: float = 45.0,
        q_length: float = 2.0,
        k_length: float = 1.5,
        q_direction: float = 20.0,
        max_length: float = 3.0,
    ):
        if not is_number(max_length) or not 0.5 <= max_length <= 100:
            raise ValueError(
                tr(
                    "max_length must be a number in [0.5, 100], got {max_length!r}",
                    max_length=max_length,
                )
            )
        self.q_direction = _check_range("q_direction", q_direction, -360.0, 360.0)
        low = 0.1 * max_length  # a zero-length arrow has no angle
        angle = _check_range("angle", angle, -180.0, 180.0)
        q_length = _check_range("q_length", q_length, low, max_length)
        k_length = _check_range("k_length", k_length, low, max_length)
        self.angle = widgets.FloatSlider(
            value=angle, min=-180, max=180, step=5, description=tr("θ (degrees)"),
            continuous_update=True, readout_format=".0f",
        )  # fmt: skip
        step = max_length / 30
        self.q_length = widgets.FloatSlider(
            value=q_length, min=low, max=max_length, step=step, description="|q|",
            continuous_update=True, readout_format=".2f",
        )  # fmt: skip
        self.k_length = widgets.FloatSlider(
            value=k_length, min=low, max=max_length, step=step, description="|k|",
            continuous_update=True, readout_format=".2f",
        )  # fmt: skip
        self._extent = EXTENT_MARGIN * max_length
        self._score_limit = 1.15 * max_length**2
        self.canvas = DotProductGeometryCanvas(blit=True)
        super().__init__([self.angle, self.q_length, self.k_length])
        self.redraw()

    @property
    def q(self) -> np.ndarray:
        """The query, (2,): length |q| along q_direction."""
        return self.q_length.value * _unit(self.q_direction)

    @property
    def k(self) -> np.ndarray:
        """The key, (2,): length |k| at θ from the query."""
        return self.k_length.value * _unit(self.q_direction + self.angle.value)

    def score(self) -> float:
        """q·k from the components, q₀k₀ + q₁k₁ (not from the angle)."""
        q, k = check_vector_2d("q", self.q), check_vector_2d("k", self.k)
        return float(q[0] * k[0] + q[1] * k[1])

    def redraw(self) -> None:
        q, k = self.q, self.k
        self.canvas.draw(q, k, extent=self._extent, score_limit=self._score_limit)
        self.image.value = self.canvas.png()
        theta, q_len, k_len = self.angle.value, self.q_length.value, self.k_length.value
        cos = math.cos(math.radians(theta))
        score = self.score()
        self.show(  # numbers and the course's own markup only: nothing to escape
            f"q = ({q[0]:.2f}, {q[1]:.2f}), k = ({k[0]:.2f}, {k[1]:.2f}): "
            "q·k = q<sub>0</sub>k<sub>0</sub> + q<sub>1</sub>k<sub>1</sub> = "
            f"<b>{format_number(score, 3)}</b>; "
            f"|q| |k| cos θ = {q_len:.2f} × {k_len:.2f} × {format_factor(cos, 3)} = "
            f"<b>{format_number(q_len * k_len * cos, 3)}</b>; "
            + markup("scaled for d<sub>k</sub> = {d_k}", d_k=D_K)
            + tr(": ")
            + f"q·k / √{D_K} = <b>{format_number(score / math.sqrt(D_K), 3)}</b>"
        )

    def __repr__(self) -> str:
        return "DotProductGeometryExplorer(2-D q and k)"


def _unit(degrees: float) -> np.ndarray:
    radians = math.radians(degrees)
    return np.array([math.cos(radians), math.sin(radians)])
