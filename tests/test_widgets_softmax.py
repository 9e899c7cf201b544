import math

import ipywidgets as widgets
import pytest
import torch
import torch.nn.functional as F

from explorer_checks import assert_redraws
from nbhelpers import SoftmaxExplorer
from nbhelpers.widgets.softmax import parse_scores

TOKENS = ["犬", "が", "河岸", "を", "歩く"]
SCORES = [3.0, -1.0, 2.0, -0.5, 1.0]


def make_explorer():
    return SoftmaxExplorer(SCORES, TOKENS)


def test_explorer_draws_bars_into_an_image_widget():
    explorer = make_explorer()
    assert isinstance(explorer.image, widgets.Image)
    assert isinstance(explorer.image.value, memoryview)
    assert explorer.png().startswith(b"\x89PNG")
    assert isinstance(explorer.scores_text, widgets.Text)
    assert [t.get_text() for t in explorer.canvas.ax.get_xticklabels()] == TOKENS
    assert "largest probability <b>0.644</b> on <b>犬</b>" in explorer.readout.value


def test_probabilities_match_torch_at_every_temperature():
    explorer = make_explorer()
    for T in (0.05, 0.5, 1.0, 5.0):
        explorer.temperature.value = T
        expected = F.softmax(torch.tensor(SCORES) / T, dim=-1)
        torch.testing.assert_close(explorer.probabilities(), expected, atol=1e-6, rtol=0)


def test_moving_the_temperature_redraws_image_and_readout():
    assert_redraws(make_explorer(), "temperature", 0.3)


def test_editing_the_scores_redraws_with_new_labels():
    explorer = make_explorer()
    before_png = explorer.png()
    explorer.scores_text.value = "1000, 999, 998"
    assert explorer.png() != before_png
    assert explorer.values == [1000.0, 999.0, 998.0]
    assert [t.get_text() for t in explorer.canvas.ax.get_xticklabels()] == ["1", "2", "3"]
    expected = F.softmax(torch.tensor([2.0, 1.0, 0.0]), dim=-1)  # stable: only gaps matter
    torch.testing.assert_close(explorer.probabilities(), expected, atol=1e-6, rtol=0)
    assert "sum = 1.000" in explorer.readout.value


def test_minus_inf_masks_a_key():
    explorer = make_explorer()
    explorer.scores_text.value = "3, -1, 2, -inf, 1"
    probabilities = explorer.probabilities()
    assert probabilities[3] == 0
    assert torch.isfinite(probabilities).all()


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("3, x, 2", "score 2 (&#x27;x&#x27;) is not a number"),
        ("", "type at least one score"),
        ("1, nan", "score 2 (&#x27;nan&#x27;) must be finite or -inf"),
        ("1, inf", "must be finite or -inf"),
        ("-inf, -inf", "at least one score must be finite"),
        ("1e39, 1", "does not fit in float32"),
    ],
)
def test_a_parse_error_is_explained_and_keeps_the_last_chart(text, message):
    explorer = make_explorer()
    before_png = explorer.png()
    explorer.scores_text.value = text
    assert "Could not read the scores" in explorer.readout.value
    assert message in explorer.readout.value
    assert explorer.png() == before_png
    assert explorer.values == SCORES
    explorer.scores_text.value = "1, 2"  # recovers on the next good input
    assert "largest probability" in explorer.readout.value


def test_parse_scores_accepts_spaces_a_trailing_comma_and_full_width_commas():
    assert parse_scores(" 1,2.5 , -3e1, ") == [1.0, 2.5, -30.0]
    assert parse_scores("1，2") == [1.0, 2.0]
    assert parse_scores("-inf, 0") == [-math.inf, 0.0]


def test_bad_constructor_scores_are_named():
    with pytest.raises(ValueError, match="scores must be a sequence of numbers"):
        SoftmaxExplorer(["a", 1.0])


def test_repr_is_short_and_stable():
    explorer = make_explorer()
    explorer.temperature.value = 2.0
    explorer.scores_text.value = "1, 2, 3"
    assert repr(explorer) == "SoftmaxExplorer()"
