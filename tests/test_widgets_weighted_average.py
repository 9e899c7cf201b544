"""Notebook 03's weighted-average explorer and its convex-hull figure."""

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from explorer_checks import assert_redraws
from nbhelpers import WeightedAverageExplorer, weighted_average_figure
from nbhelpers.figures.weighted_average import convex_hull

TOKENS = ["犬", "が", "河岸", "を", "歩く"]


def make_explorer(**kwargs):
    g = torch.Generator().manual_seed(0)
    Q, K = torch.randn(5, 4, generator=g), torch.randn(5, 4, generator=g)
    V = torch.randn(5, 2, generator=g)
    return WeightedAverageExplorer(TOKENS, Q, K, V, **kwargs)


def test_temperature_and_query_redraw_the_point():
    explorer = make_explorer(query=4)
    assert_redraws(explorer, "temperature", 0.3)
    assert_redraws(explorer, "query", 1)
    assert repr(explorer) == "WeightedAverageExplorer(5 values)"


def test_the_point_is_torchs_attention_output():
    explorer = make_explorer(query=2)
    explorer.temperature.value = 2.0
    q = explorer.Q[2:3]
    reference = F.scaled_dot_product_attention(q, explorer.K, explorer.V, scale=1 / (2.0 * 2.0))
    torch.testing.assert_close(explorer.output(), reference[0], atol=1e-6, rtol=0)


def test_the_hull_holds_the_corners_and_every_average():
    points = np.array([[0, 0], [2, 0], [2, 2], [0, 2], [1, 1], [1, 0.5]], dtype=float)
    hull = convex_hull(points)
    assert {tuple(p) for p in hull} == {(0, 0), (2, 0), (2, 2), (0, 2)}
    rng = np.random.default_rng(0)
    for _ in range(100):  # any convex combination stays inside (the square here)
        w = rng.dirichlet(np.ones(len(points)))
        x, y = w @ points
        assert 0 <= x <= 2 and 0 <= y <= 2


def test_bad_values_are_named():
    with pytest.raises(ValueError, match=r"values must be \(m, 2\)"):
        weighted_average_figure(np.zeros((3, 3)), np.ones(3) / 3)
    with pytest.raises(ValueError, match="V must be"):
        WeightedAverageExplorer(TOKENS, torch.zeros(5, 4), torch.zeros(5, 4), torch.zeros(5, 3))
