import ipywidgets as widgets
import numpy as np
import pytest
import torch

from layout import cell_texts
from nbhelpers import MaskExplorer

TOKENS = ["犬", "が", "河岸", "を", "歩く"]


def make_explorer(**kwargs):
    scores = torch.randn(5, 5, generator=torch.Generator().manual_seed(0))
    return MaskExplorer(TOKENS, scores, **kwargs)


def test_draws_png_into_an_image_widget():
    explorer = make_explorer()
    assert isinstance(explorer.image, widgets.Image)
    assert explorer.png().startswith(b"\x89PNG")


def test_causal_toggle_redraws_and_masks_the_future():
    explorer = make_explorer(causal=False)
    explorer.query.value = 1
    before_png, before_text = explorer.png(), explorer.readout.value
    explorer.causal.value = True
    assert explorer.png() != before_png
    assert explorer.readout.value != before_text
    weights = explorer.weights()
    assert torch.all(weights.triu(1) == 0)
    assert torch.allclose(weights.sum(-1), torch.ones(5))


def test_padding_masks_the_last_keys_and_relabels_them():
    explorer = make_explorer(causal=False)
    before = explorer.png()
    explorer.padding.value = 2
    assert explorer.png() != before
    assert explorer.labels() == ["犬", "が", "河岸", "[PAD]", "[PAD]"]
    assert torch.all(explorer.weights()[:, 3:] == 0)
    assert "sees 3 of 5 keys" in explorer.readout.value


def test_masked_cells_are_drawn_with_a_cross():
    explorer = make_explorer(causal=True)
    texts = np.array(cell_texts(explorer.canvas.ax)).reshape(5, 5)
    blocked = np.triu(np.ones((5, 5), dtype=bool), 1)
    assert (texts[blocked] == "×").all() and (texts[~blocked] != "×").all()


def test_a_fully_masked_row_reads_zero_not_nan():
    explorer = make_explorer(causal=True)
    explorer.padding.value = 5
    weights = explorer.weights()
    assert not weights.isnan().any()
    assert torch.equal(weights, torch.zeros(5, 5))
    assert "may see no key" in explorer.readout.value


def test_query_selection_changes_the_readout():
    explorer = make_explorer()
    before = explorer.readout.value
    explorer.query.value = 0
    assert explorer.readout.value != before
    assert "<b>犬</b> sees 1 of 5" in explorer.readout.value


def test_repr_is_short_and_stable():
    explorer = make_explorer()
    explorer.padding.value = 1
    assert repr(explorer) == "MaskExplorer(5 tokens)"


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"scores": torch.zeros(4, 4)}, r"scores must be \(5, 5\) for 5 tokens, got \(4, 4\)"),
        ({"padding": 6}, r"padding must be an int in \[0, 5\].*got 6"),
    ],
)
def test_bad_input_is_named(kwargs, message):
    arguments = {"scores": torch.zeros(5, 5), **kwargs}
    with pytest.raises(ValueError, match=message):
        MaskExplorer(TOKENS, **arguments)
