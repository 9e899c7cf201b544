import math

import matplotlib.pyplot as plt
import pytest
import torch
from matplotlib.figure import Figure

from nbhelpers import against_dk_figure, dot_product_variance, random_dot_products, row_entropy


def generator(seed=0):
    return torch.Generator().manual_seed(seed)


@pytest.mark.parametrize("d_k", [1, 16, 256])
def test_variance_of_dot_products_grows_like_d_k_and_scaling_undoes_it(d_k):
    unscaled = dot_product_variance(d_k, 4000, generator=generator())
    scaled = dot_product_variance(d_k, 4000, scale=True, generator=generator(1))
    assert unscaled / d_k == pytest.approx(1, abs=0.2)
    assert scaled == pytest.approx(1, abs=0.2)


def test_random_dot_products_are_seeded_and_scaled_by_sqrt_d_k():
    raw = random_dot_products(64, 10, generator=generator())
    assert raw.shape == (10,)
    scaled = random_dot_products(64, 10, scale=True, generator=generator())
    torch.testing.assert_close(scaled, raw / 8)


@pytest.mark.parametrize(("name", "kwargs"), [("d_k", {"d_k": 0}), ("samples", {"samples": 1.5})])
def test_bad_sizes_are_named(name, kwargs):
    with pytest.raises(ValueError, match=f"{name} must be a positive int"):
        random_dot_products(**{"d_k": 4, "samples": 10, **kwargs})


def test_row_entropy_of_one_hot_uniform_and_masked_rows():
    weights = torch.tensor([[1.0, 0.0, 0.0, 0.0], [0.25] * 4, [0.5, 0.5, 0.0, 0.0]])
    entropy = row_entropy(weights)
    torch.testing.assert_close(entropy, torch.tensor([0.0, math.log(4), math.log(2)]))
    assert row_entropy(torch.zeros(3)) == 0  # a fully masked row: no NaN
    with pytest.raises(ValueError, match="weights must be a floating-point tensor"):
        row_entropy(torch.ones(3, dtype=torch.long))


def test_against_dk_figure_is_a_pure_log_log_figure():
    before = plt.get_fignums()
    d_ks = [1, 2, 4, 8]
    figure = against_dk_figure(d_ks, {"raw": [1, 2, 4, 8]}, theory={"d_k": d_ks}, ylabel="var")
    assert isinstance(figure, Figure)
    assert plt.get_fignums() == before
    ax = figure.axes[0]
    assert (ax.get_xscale(), ax.get_yscale()) == ("log", "log")
    assert [line.get_linestyle() for line in ax.lines] == ["-", "--"]


@pytest.mark.parametrize(
    ("d_ks", "series", "message"),
    [
        ([], {"a": []}, "d_ks must be a non-empty 1-D sequence"),
        ([0, 1], {"a": [1, 2]}, "d_ks must be a non-empty 1-D sequence of positive"),
        ([1, 2], {"a": [1, 2, 3]}, "series 'a' has 3 values but there are 2 d_k values"),
    ],
)
def test_against_dk_figure_bad_input_is_named(d_ks, series, message):
    with pytest.raises(ValueError, match=message):
        against_dk_figure(d_ks, series, ylabel="y")
