"""Notebook 01's picture of q·k = |q| |k| cos θ and its explorer."""

import io
import math
import re

import numpy as np
import PIL.Image
import pytest
import torch

from explorer_checks import assert_redraws
from nbhelpers.figures.canvas import figure_to_png
from nbhelpers.figures.dot_product_geometry import (
    DotProductGeometryCanvas,
    dot_product_geometry_figure,
    signed_angle,
)
from nbhelpers.widgets.dot_product_geometry import DotProductGeometryExplorer


def pixels(png: bytes) -> np.ndarray:
    return np.asarray(PIL.Image.open(io.BytesIO(png)).convert("RGB")).astype(int)


def test_the_figure_is_sharp_legible_and_writes_the_score_out():
    figure = dot_product_geometry_figure(torch.tensor([2.0, 0.5]), np.array([1.0, 1.5]))
    assert figure.dpi >= 100
    assert figure_to_png(figure).startswith(b"\x89PNG")
    arrows, scores = figure.axes
    assert arrows.get_aspect() == 1.0  # equal aspect: angles look like angles
    texts = [t for t in figure.findobj(match=lambda a: hasattr(a, "get_fontsize"))]
    shown = [t for t in texts if t.get_visible() and t.get_text()]
    assert min(t.get_fontsize() for t in shown) >= 9
    score = 2.0 * 1.0 + 0.5 * 1.5
    assert f"≈ {score:.2f}" in arrows.get_title()  # q·k = |q| |k| cos θ with numbers
    # The score against θ: a cosine scaled by |q||k|, on the panel's grid of 361 angles.
    curve = next(line for line in scores.lines if len(line.get_xdata()) == 361)
    product = math.hypot(2.0, 0.5) * math.hypot(1.0, 1.5)
    np.testing.assert_allclose(curve.get_ydata(), product * np.cos(np.radians(curve.get_xdata())))


def test_fixed_limits_keep_the_axes_still():
    canvas = DotProductGeometryCanvas()
    for k in ([1.0, 0.0], [-0.2, 2.5], [0.0, -0.5]):
        canvas.draw([1.5, 0.5], k, extent=3.0, score_limit=8.0)
        assert canvas.arrow_ax.get_xlim() == canvas.arrow_ax.get_ylim() == (-3.0, 3.0)
        assert canvas.score_ax.get_ylim() == (-8.0, 8.0)


def test_the_blitted_picture_matches_a_full_render():
    fast, full = DotProductGeometryCanvas(blit=True), DotProductGeometryCanvas()
    for k in ([1.0, 1.5], [-1.2, -0.8]):  # the second paints over a kept background
        for canvas in (fast, full):
            canvas.draw([2.0, 0.5], k, extent=3.9, score_limit=10.0)
        difference = np.abs(pixels(fast.png()) - pixels(full.png())).max(axis=-1)
        assert (difference > 30).sum() < 20  # antialiasing at a few edges at most


@pytest.mark.parametrize(
    ("q", "k", "error", "message"),
    [
        ([1.0, 2.0, 3.0], [1.0, 0.0], ValueError, r"q must be a 2-D vector of shape \(2,\)"),
        ([1.0, 0.0], [[1.0, 0.0]], ValueError, r"k must be a 2-D vector of shape \(2,\)"),
        ([1.0, float("nan")], [1.0, 0.0], ValueError, "q must hold finite numbers"),
        ([1.0, 0.0], [float("inf"), 0.0], ValueError, "k must hold finite numbers"),
        ([0.0, 0.0], [1.0, 0.0], ValueError, "q must not be the zero vector"),
        ([1.0, 0.0], "ab", TypeError, "k must be a 2-D vector of two numbers"),
    ],
)
def test_bad_vectors_are_named(q, k, error, message):
    with pytest.raises(error, match=message):
        dot_product_geometry_figure(q, k)


def test_bad_limits_are_named():
    with pytest.raises(ValueError, match="extent must be a positive finite number"):
        dot_product_geometry_figure([1.0, 0.0], [0.0, 1.0], extent=-1.0)
    with pytest.raises(ValueError, match="extent must be at least 3"):
        dot_product_geometry_figure([3.0, 0.0], [0.0, 1.0], extent=2.0)
    with pytest.raises(ValueError, match=r"score_limit must be at least 6 \(\|q\|\|k\|"):
        dot_product_geometry_figure([3.0, 0.0], [0.0, 2.0], score_limit=5.0)
    with pytest.raises(ValueError, match="angle must be a number in"):
        DotProductGeometryExplorer(angle=200.0)
    with pytest.raises(ValueError, match="k_length must be a number in"):
        DotProductGeometryExplorer(k_length=0.0)


def test_the_signed_angle_is_k_relative_to_q():
    assert signed_angle(np.array([1.0, 0.0]), np.array([0.0, 2.0])) == pytest.approx(90.0)
    assert signed_angle(np.array([0.0, 1.0]), np.array([1.0, 0.0])) == pytest.approx(-90.0)
    assert signed_angle(np.array([1.0, 0.0]), np.array([-1.0, -0.0])) == 180.0  # not -180


@pytest.mark.parametrize(
    ("control", "value"), [("angle", 120.0), ("q_length", 1.0), ("k_length", 2.7)]
)
def test_each_slider_redraws_the_picture_and_the_readout(control, value):
    explorer = DotProductGeometryExplorer()
    assert_redraws(explorer, control, value)
    assert repr(explorer) == "DotProductGeometryExplorer(2-D q and k)"


def test_the_readout_score_is_q_dot_k():
    explorer = DotProductGeometryExplorer(q_direction=30.0)
    for angle, q_length, k_length in ((45.0, 2.0, 1.5), (150.0, 3.0, 0.6), (-90.0, 1.2, 2.4)):
        explorer.angle.value = angle
        explorer.q_length.value = q_length
        explorer.k_length.value = k_length
        # Independently: the vectors from their polar coordinates, then torch.dot.
        start = math.radians(30)
        q = q_length * torch.tensor([math.cos(start), math.sin(start)], dtype=torch.float64)
        phi = math.radians(30 + angle)
        k = k_length * torch.tensor([math.cos(phi), math.sin(phi)], dtype=torch.float64)
        expected = float(torch.dot(q, k))
        bold = re.findall(r"<b>(-?[\d.]+)</b>", explorer.readout.value)
        assert float(bold[0]) == pytest.approx(expected, abs=5e-4)  # q₁k₁ + q₂k₂
        assert float(bold[1]) == pytest.approx(expected, abs=5e-4)  # |q| |k| cos θ
        assert float(bold[2]) == pytest.approx(expected / math.sqrt(2), abs=5e-4)
        assert explorer.score() == pytest.approx(expected, abs=1e-9)


def test_the_angle_sets_the_sign():
    explorer = DotProductGeometryExplorer()
    signs = []
    for angle in (0.0, 60.0, 90.0, 120.0, 180.0):
        explorer.angle.value = angle
        signs.append(round(explorer.score(), 9))
    assert signs[0] > signs[1] > 0 and signs[2] == 0 and signs[4] < signs[3] < 0


def test_closing_stops_the_redraws():
    explorer = DotProductGeometryExplorer()
    angle = explorer.angle
    explorer.close()
    before = explorer.png()
    angle.value = -60.0
    assert explorer.png() == before
