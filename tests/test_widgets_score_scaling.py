import math

import ipywidgets as widgets
import pytest
import torch
import torch.nn.functional as F

from nbhelpers import ScoreScalingExplorer, row_entropy

TOKENS = ["犬", "が", "河岸", "を", "歩く"]


def test_explorer_draws_png_into_an_image_widget():
    explorer = ScoreScalingExplorer(TOKENS)
    assert isinstance(explorer.image, widgets.Image)
    assert isinstance(explorer.image.value, memoryview)
    assert explorer.png().startswith(b"\x89PNG")
    assert "every row's largest weight is at least" in explorer.readout.value
    assert "mean row entropy" in explorer.readout.value


def test_d_k_slider_spans_1_to_512_in_powers_of_two():
    explorer = ScoreScalingExplorer(TOKENS)
    assert list(explorer.d_k.options) == [2**p for p in range(10)]


def test_moving_d_k_redraws_image_and_readout():
    explorer = ScoreScalingExplorer(TOKENS, d_k=4)
    before_png, before_text = explorer.png(), explorer.readout.value
    explorer.d_k.value = 256
    assert explorer.png() != before_png
    assert explorer.readout.value != before_text
    assert explorer.Q.shape == explorer.K.shape == (5, 256)


def test_scale_toggle_redraws_and_matches_torch():
    explorer = ScoreScalingExplorer(TOKENS, d_k=64)
    raw = explorer.weights()
    torch.testing.assert_close(raw, F.softmax(explorer.Q @ explorer.K.T, dim=-1))
    before_png, before_text = explorer.png(), explorer.readout.value
    explorer.scale.value = True
    assert explorer.png() != before_png
    assert explorer.readout.value != before_text
    expected = F.softmax(explorer.Q @ explorer.K.T / math.sqrt(64), dim=-1)
    torch.testing.assert_close(explorer.weights(), expected, atol=1e-6, rtol=0)


def test_readout_reports_the_least_peaked_row_and_mean_entropy():
    # What the Try-it asks: the smallest, over the rows, of each row's largest weight.
    explorer = ScoreScalingExplorer(TOKENS, d_k=16, scale=True)
    weights = explorer.weights()
    text = explorer.readout.value
    assert f"<b>{float(weights.amax(dim=-1).min()):.3f}</b>" in text
    assert f"<b>{float(row_entropy(weights).mean()):.3f}</b>" in text


def test_unscaled_rows_saturate_and_scaled_rows_do_not():
    explorer = ScoreScalingExplorer(TOKENS, d_k=512)
    raw_entropy = float(row_entropy(explorer.weights()).mean())
    explorer.scale.value = True
    scaled_entropy = float(row_entropy(explorer.weights()).mean())
    assert raw_entropy < 0.1 < 0.5 < scaled_entropy


def test_growing_d_k_keeps_the_first_components():
    explorer = ScoreScalingExplorer(TOKENS, d_k=4)
    first = explorer.Q.clone()
    explorer.d_k.value = 32
    assert torch.equal(explorer.Q[:, :4], first)


def test_the_seed_chooses_the_vectors():
    a, b, c = (ScoreScalingExplorer(TOKENS, seed=s) for s in (0, 0, 1))
    assert torch.equal(a.Q, b.Q) and a.png() == b.png()
    assert not torch.equal(a.Q, c.Q)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"d_k": 3}, r"d_k must be one of \[1, 2, 4"),
        ({"max_d_k": 0}, r"max_d_k must be a positive int"),
        ({"tokens": []}, r"tokens must name at least one token"),
    ],
)
def test_bad_arguments_are_named(kwargs, message):
    with pytest.raises(ValueError, match=message):
        ScoreScalingExplorer(**{"tokens": TOKENS, **kwargs})


def test_repr_is_short_and_stable():
    explorer = ScoreScalingExplorer(TOKENS)
    explorer.d_k.value = 8
    explorer.scale.value = True
    assert repr(explorer) == "ScoreScalingExplorer(5 tokens)"
