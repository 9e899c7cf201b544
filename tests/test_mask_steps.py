"""Notebook 04's step-by-step masking figure shows the numbers it is given."""

import matplotlib.text
import pytest
import torch
import torch.nn.functional as F

from nbhelpers import causal_mask, running_example, similarity_scores
from nbhelpers.figures import figure_to_png, mask_steps_figure


def cell_texts(ax):
    return [t.get_text() for t in ax.findobj(matplotlib.text.Text) if t.get_text()]


def test_each_panel_holds_its_step_and_the_weights_are_softmax():
    example = running_example()
    S = similarity_scores(example.Q, example.K)
    M = causal_mask(5)
    figure = mask_steps_figure(S, M, list(example.tokens))
    assert figure_to_png(figure).startswith(b"\x89PNG")
    scores, mask, total, weights = figure.axes[:4]
    assert "2.83" in cell_texts(scores) and "−∞" not in cell_texts(scores)
    assert cell_texts(mask).count("−∞") == 10  # the strict upper triangle of a 5 x 5
    assert cell_texts(total).count("−∞") == 10
    assert cell_texts(weights).count("×") == 10
    expected = F.softmax(S + M, dim=-1)  # independent reference for the last panel
    assert f"{expected[4, 0]:.2f}" in cell_texts(weights)
    assert f"{expected[1, 1]:.2f}" in cell_texts(weights)


def test_bad_input_is_named():
    with pytest.raises(ValueError, match="same shape"):
        mask_steps_figure(torch.zeros(3, 3), torch.zeros(3, 4))
    with pytest.raises(ValueError, match="only 0 .* and -inf"):
        mask_steps_figure(torch.zeros(3, 3), torch.ones(3, 3))
    with pytest.raises(ValueError, match="tokens has 2 labels"):
        mask_steps_figure(torch.zeros(3, 3), causal_mask(3), ["a", "b"])
