import ipywidgets as widgets
import torch

from explorer_checks import assert_redraws, assert_shows_a_figure
from nbhelpers import AttentionMatrixExplorer

TOKENS = ["犬", "が", "河岸", "を", "歩く"]


def make_explorer():
    return AttentionMatrixExplorer(
        TOKENS, torch.randn(5, 5, generator=torch.Generator().manual_seed(0))
    )


def test_explorer_draws_png_into_an_image_widget():
    explorer = make_explorer()
    assert isinstance(explorer.image, widgets.Image)
    assert_shows_a_figure(explorer)


def test_moving_the_slider_redraws_image_and_readout():
    assert_redraws(make_explorer(), "temperature", 0.2)


def test_causal_toggle_zeroes_the_future():
    explorer = make_explorer()
    before = explorer.png()
    explorer.causal.value = True
    assert explorer.png() != before
    weights = explorer.weights()
    assert torch.all(weights.triu(1) == 0)
    assert torch.allclose(weights.sum(-1), torch.ones(5))


def test_query_selection_changes_the_readout():
    explorer = make_explorer()
    explorer.query.value = 4
    assert "歩く" in explorer.readout.value.split("puts")[0]


def test_repr_is_short_and_stable():
    explorer = make_explorer()
    explorer.temperature.value = 3.0
    assert repr(explorer) == "AttentionMatrixExplorer(5 tokens)"


def test_the_display_carries_the_figure_for_viewers_without_a_kernel():
    explorer = make_explorer()
    bundle = explorer._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in bundle
    assert bundle["image/png"].startswith(b"\x89PNG")
    explorer.temperature.value = 0.3
    after = explorer._repr_mimebundle_()["image/png"]
    assert after != bundle["image/png"], "the viewers' PNG does not follow the slider"
    assert after == bytes(explorer.image.value)  # the picture the widget shows now
