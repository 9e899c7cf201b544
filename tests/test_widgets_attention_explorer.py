import ipywidgets as widgets
import numpy as np
import pytest
import torch
import torch.nn.functional as F

from explorer_checks import assert_shows_a_figure
from nbhelpers.figures.attention_step import AttentionStepCanvas, attention_step_figure, nice_limit
from nbhelpers.figures.canvas import figure_to_png
from nbhelpers.widgets.attention_explorer import AttentionExplorer, attention_step

TOKENS = ["犬", "が", "河岸", "を", "歩く"]


@pytest.fixture
def explorer():
    return AttentionExplorer(TOKENS)


def test_draws_png_into_an_image_widget(explorer):
    assert isinstance(explorer.image, widgets.Image)
    assert_shows_a_figure(explorer)
    assert explorer.query.value == 4  # the last token, 歩く, by default
    assert "歩く" in explorer.readout.value


@pytest.mark.parametrize(
    ("control", "value"),
    [("query", 0), ("d_k", 32), ("temperature", 0.3), ("seed", 7)],
)
def test_every_control_redraws_image_and_readout(explorer, control, value):
    before_png, before_text = explorer.png(), explorer.readout.value
    getattr(explorer, control).value = value
    assert explorer.png() != before_png
    assert explorer.readout.value != before_text


def test_same_state_gives_same_png_whatever_the_path(explorer):
    first = explorer.png()
    explorer.seed.value = 3
    explorer.d_k.value = 50
    explorer.seed.value = 0
    explorer.d_k.value = 4
    assert explorer.png() == first


def test_numbers_match_pytorch(explorer):
    explorer.d_k.value, explorer.temperature.value = 16, 2.0
    step = explorer.step()
    assert step.Q.shape == (5, 16) and step.V.shape == (5, 4)
    reference = F.scaled_dot_product_attention(step.Q, step.K, step.V, scale=1 / (16**0.5 * 2.0))
    torch.testing.assert_close(step.output, reference, atol=1e-6, rtol=0)
    torch.testing.assert_close(step.weights.sum(-1), torch.ones(5))


def test_d_k_leaves_the_values_unchanged():
    a = attention_step(5, 8, 2, 4, 1.0, seed=1)
    b = attention_step(5, 8, 40, 4, 1.0, seed=1)
    assert torch.equal(a.X, b.X) and torch.equal(a.V, b.V)
    assert not torch.equal(a.weights, b.weights)


def test_repr_is_short_and_stable(explorer):
    explorer.temperature.value = 3.0
    explorer.seed.value = 9
    assert repr(explorer) == "AttentionExplorer(5 tokens, d_model=8)"


@pytest.mark.parametrize(
    ("kwargs", "error", "named"),
    [
        ({"d_k": 0}, ValueError, "d_k"),
        ({"d_k": 2.5}, TypeError, "d_k"),
        ({"temperature": 0.0}, ValueError, "temperature"),
        ({"temperature": "hot"}, TypeError, "temperature"),
        ({"seed": -1}, ValueError, "seed"),
        ({"query": 5}, ValueError, "query"),
        ({"d_v": 0}, ValueError, "d_v"),
        ({"d_model": True}, TypeError, "d_model"),
    ],
)
def test_bad_arguments_are_named(kwargs, error, named):
    with pytest.raises(error, match=named):
        AttentionExplorer(TOKENS, **kwargs)


def test_bad_tokens_are_named():
    with pytest.raises(TypeError, match="tokens"):
        AttentionExplorer("犬が河岸を歩く")
    with pytest.raises(ValueError, match="len\\(tokens\\)"):
        AttentionExplorer([f"t{i}" for i in range(11)])


def test_blitted_png_equals_a_full_render():
    """The fast path paints the same pixels as rendering the whole figure from scratch."""
    step = attention_step(5, 8, 4, 4, 0.7, seed=2)
    fast = AttentionStepCanvas()
    fast.draw(step.scores, step.weights, step.V, 1, TOKENS, TOKENS)
    fast.png()
    fast.draw(step.scores, step.weights, step.V, 3, TOKENS, TOKENS)  # blitted
    slow = attention_step_figure(step.scores, step.weights, step.V, 3, TOKENS, TOKENS)

    def pixels(png):
        from io import BytesIO

        from PIL import Image

        return np.asarray(Image.open(BytesIO(png)).convert("RGB")).astype(int)

    difference = np.abs(pixels(fast.png()) - pixels(figure_to_png(slow)))
    assert (difference.max(axis=-1) > 64).mean() < 0.002  # antialiasing only


def test_cross_attention_shapes_are_drawn():
    scores = torch.randn(2, 4)
    figure = attention_step_figure(scores, scores.softmax(-1), torch.randn(4, 3), 1)
    assert figure_to_png(figure).startswith(b"\x89PNG")


@pytest.mark.parametrize(
    ("args", "error", "named"),
    [
        ((torch.zeros(2, 4), torch.zeros(2, 3), torch.zeros(4, 3), 0), ValueError, "weights"),
        ((torch.zeros(2, 4), torch.zeros(2, 4), torch.zeros(3, 3), 0), ValueError, "values"),
        ((torch.zeros(2, 4), torch.zeros(2, 4), torch.zeros(4, 3), 2), ValueError, "query"),
        ((torch.zeros(2, 4), torch.zeros(2, 4), torch.zeros(4, 3), 1.0), TypeError, "query"),
        ((torch.zeros(4), torch.zeros(2, 4), torch.zeros(4, 3), 0), ValueError, "scores"),
        (
            (torch.full((2, 4), float("nan")), torch.zeros(2, 4), torch.zeros(4, 3), 0),
            ValueError,
            "scores",
        ),
    ],
)
def test_figure_names_bad_input(args, error, named):
    with pytest.raises(error, match=named):
        attention_step_figure(*args)


def test_nice_limit_leaves_headroom():
    # 30% above the largest value, so that the number on the tallest bar stays in its panel
    assert nice_limit(0.0) == 1.0
    assert nice_limit(1.5) == 2.0
    assert nice_limit(1.8) == 3.0
    assert nice_limit(2.67) == 4.0
    assert nice_limit(9.0) == 15.0
    assert nice_limit(5000.0) == 8000.0


def test_every_path_of_redraws_paints_what_a_full_render_paints(explorer):
    """Panels are repainted only when their numbers change; whatever the order of the
    changes, the picture must be the one a full render of the same state gives."""
    from io import BytesIO

    from PIL import Image

    def pixels(png):
        return np.asarray(Image.open(BytesIO(png)).convert("RGB")).astype(int)

    moves = [("query", 1), ("temperature", 0.4), ("query", 3), ("d_k", 20), ("query", 0)]
    moves += [("seed", 11), ("temperature", 2.5), ("query", 4)]
    for control, value in moves:
        getattr(explorer, control).value = value
        step = explorer.step()
        full = attention_step_figure(
            step.scores, step.weights, step.V, explorer.query.value, TOKENS, TOKENS,
            title=explorer.canvas.title,
        )  # fmt: skip
        difference = np.abs(pixels(explorer.png()) - pixels(figure_to_png(full)))
        assert (difference.max(axis=-1) > 64).mean() < 0.002, (control, value)
        fresh = AttentionExplorer(
            TOKENS, d_k=explorer.d_k.value, temperature=explorer.temperature.value,
            seed=explorer.seed.value, query=explorer.query.value,
        )  # fmt: skip
        assert fresh.png() == explorer.png(), (control, value)  # to the byte


def test_rendering_the_figure_elsewhere_does_not_spoil_the_next_redraw(explorer):
    first = explorer.png()
    figure_to_png(explorer.canvas.figure)  # e.g. show_figure(explorer.canvas.figure)
    explorer.query.value = 0
    explorer.query.value = 4
    assert explorer.png() == first


def test_a_small_figure_whose_panels_overlap_still_redraws_correctly():
    from io import BytesIO

    from PIL import Image

    step = attention_step(5, 8, 4, 4, 1.0, seed=0)
    canvas = AttentionStepCanvas(figsize=(5.0, 2.5))
    canvas.draw(step.scores, step.weights, step.V, 0, TOKENS, TOKENS)
    first = canvas.png()
    canvas.draw(step.scores, step.weights, step.V, 3, TOKENS, TOKENS)
    assert canvas.png() != first
    canvas.draw(step.scores, step.weights, step.V, 0, TOKENS, TOKENS)
    assert np.array_equal(
        np.asarray(Image.open(BytesIO(canvas.png()))), np.asarray(Image.open(BytesIO(first)))
    )


def test_the_step_figure_names_the_value_features_it_is_given():
    from nbhelpers.figures.attention_step import attention_step_figure

    scores = torch.tensor([[1.0, 0.0], [0.0, 1.0]])
    weights = torch.softmax(scores, dim=-1)
    values = torch.tensor([[1.0, 0.0, 0.5], [0.0, 1.0, 0.5]])
    figure = attention_step_figure(scores, weights, values, 0, feature_names=["a", "b", "c"])

    def ticks(fig):
        (values_axis,) = [ax for ax in fig.axes if ax.get_xlabel().startswith("feature")]
        return [t.get_text() for t in values_axis.get_xticklabels()]

    assert ticks(figure) == ["a", "b", "c"]
    assert ticks(attention_step_figure(scores, weights, values, 0)) == ["0", "1", "2"]
    with pytest.raises(ValueError, match="feature_names must name the 3 value features, got 2"):
        attention_step_figure(scores, weights, values, 0, feature_names=["a", "b"])
