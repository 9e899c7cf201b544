import io

import matplotlib.text
import numpy as np
import pytest
import torch
from PIL import Image

from nbhelpers import (
    HeadGridCanvas,
    MultiHeadAttention,
    MultiHeadExplorer,
    figure_to_png,
    head_grid_figure,
)
from nbhelpers.figures.heads import value_text, weight_text
from tensors import copy_to_torch

TOKENS = ["犬", "が", "河岸", "を", "歩く"]


def make_explorer(**kwargs):
    x = torch.randn(5, 8, generator=torch.Generator().manual_seed(0))
    return MultiHeadExplorer(TOKENS, x, **kwargs)


def test_heads_slider_offers_only_the_divisors_of_d_model():
    explorer = make_explorer()
    assert list(explorer.heads.options) == [1, 2, 4, 8]
    assert explorer.heads.value == 4


def test_changing_h_redraws_and_updates_the_head_selector():
    explorer = make_explorer()
    explorer.head.value = 3
    before_png, before_text = explorer.png(), explorer.readout.value
    explorer.heads.value = 2
    assert [value for _, value in explorer.head.options] == [0, 1]
    assert explorer.head.value == 1  # kept in range
    assert explorer.png() != before_png
    assert explorer.readout.value != before_text
    assert len(explorer.canvas.head_axes) == 2


def test_selecting_a_head_redraws_without_rebuilding():
    explorer = make_explorer()
    canvas = explorer.canvas
    axes = list(canvas.head_axes)
    before = explorer.png()
    explorer.head.value = 2
    assert explorer.png() != before
    assert explorer.canvas is canvas and canvas.head_axes == axes  # the same artists
    assert "head 2 (of 4, counted from 0)" in explorer.readout.value


def test_the_figures_numbers_are_the_modules():
    explorer = make_explorer(causal=True)
    weights, concat, output = explorer.compute()
    module = explorer.module()
    with torch.no_grad():
        reference, reference_weights = module(explorer.x, return_weights=True)
    assert torch.allclose(output, reference, atol=1e-6)
    assert torch.allclose(weights, reference_weights, atol=1e-6)
    assert torch.all(weights.triu(1) == 0)
    assert torch.allclose(module.W_O(concat), output, atol=1e-6)


def test_every_head_count_shares_the_same_parameters():
    explorer = make_explorer()
    w1 = explorer.module(1).W_Q.weight
    w8 = explorer.module(8).W_Q.weight
    assert torch.equal(w1, w8)
    assert "Parameters: 288 for every n_h" in explorer.readout.value


def test_a_given_module_is_used():
    module = MultiHeadAttention(8, 2)
    explorer = make_explorer(module=module)
    assert torch.equal(explorer.module().W_O.weight, module.W_O.weight.detach())


def test_repr_is_short_and_stable():
    explorer = make_explorer()
    explorer.heads.value = 8
    assert repr(explorer) == "MultiHeadExplorer(5 tokens, d_model=8)"


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"n_heads": 3}, r"n_heads=3 does not divide d_model=8.*\[1, 2, 4, 8\]"),
        ({"x": torch.zeros(4, 8)}, r"x must be \(n, d_model\) with n=5 tokens, got shape \(4, 8\)"),
        ({"module": MultiHeadAttention(4, 1)}, "d_model=8"),
    ],
)
def test_bad_input_is_named(kwargs, message):
    arguments = {"x": torch.zeros(5, 8), **kwargs}
    with pytest.raises(ValueError, match=message):
        MultiHeadExplorer(TOKENS, **arguments)


def test_grid_builder_is_pure_and_reuses_artists():
    weights = torch.softmax(torch.randn(4, 5, 5), dim=-1)
    concat, output = torch.randn(5, 8), torch.randn(5, 8)
    canvas = HeadGridCanvas()
    canvas.draw(weights, concat, output, TOKENS, selected=0)
    first_axes, first_png = list(canvas.head_axes), canvas.png()
    canvas.draw(weights.flip(0), concat, output, TOKENS, selected=1)
    assert canvas.head_axes == first_axes
    assert canvas.png() != first_png
    masked = np.triu(np.ones((5, 5), dtype=bool), 1)
    figure = head_grid_figure(weights, concat, output, TOKENS, masked=masked)
    image = figure.axes[0].images[0].get_array()
    assert np.array_equal(np.ma.getmaskarray(image), masked)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            (torch.ones(4, 5), torch.ones(5, 8), torch.ones(5, 8)),
            r"head_weights must be \(h, n, n\)",
        ),
        (
            (torch.ones(4, 5, 5), torch.ones(4, 8), torch.ones(5, 8)),
            r"concat must be \(n, d_model\)",
        ),
        (
            (torch.ones(3, 5, 5), torch.ones(5, 8), torch.ones(5, 8)),
            "is not divisible by n_heads=3",
        ),
    ],
)
def test_grid_builder_names_bad_input(args, message):
    with pytest.raises(ValueError, match=message):
        head_grid_figure(*args)


def _pixels(png: bytes) -> np.ndarray:
    return np.asarray(Image.open(io.BytesIO(png)).convert("RGB")).astype(int)


def test_cached_background_repaint_matches_a_full_render():
    weights = torch.softmax(torch.randn(4, 5, 5, generator=torch.Generator().manual_seed(1)), -1)
    concat, output = torch.randn(5, 8), torch.randn(5, 8)
    canvas = HeadGridCanvas()
    canvas.draw(weights, concat, output, TOKENS, selected=0)
    canvas.png()  # caches the background
    canvas.draw(weights.flip(0), 3 * concat, output, list("abcde"), selected=2, title="new")
    fast, full = _pixels(canvas.png()), _pixels(figure_to_png(canvas.figure))
    assert fast.shape == full.shape
    # Only the stacking of the highlight frame over the axes' edges may differ.
    assert (fast != full).any(axis=-1).mean() < 0.01


def test_grid_is_sharp_with_legible_text_and_numbers_in_the_cells():
    explorer = make_explorer(causal=True)
    explorer.png()
    canvas = explorer.canvas
    assert canvas.figure.dpi >= 100
    texts = [t for t in canvas.figure.findobj(matplotlib.text.Text) if t.get_text().strip()]
    assert texts and all(t.get_fontsize() >= 9 for t in texts)
    numbers = [*canvas.head_numbers, canvas.concat_numbers, canvas.output_numbers]
    assert all(artist is not None and artist.fontsize >= 9 for artist in numbers)
    weights, concat, _ = explorer.compute()
    shown = canvas.head_numbers[1].get_texts()
    blocked = torch.ones(5, 5, dtype=torch.bool).triu(1).flatten()
    assert all(text == "" for text, b in zip(shown, blocked, strict=True) if b)  # masked: blank
    assert [t for t, b in zip(shown, blocked, strict=True) if not b] == [
        weight_text(w) for w, b in zip(weights[1].flatten().tolist(), blocked, strict=True) if not b
    ]
    assert canvas.concat_numbers.get_texts() == [value_text(v) for v in concat.flatten().tolist()]


def test_cell_numbers_follow_a_redraw():
    explorer = make_explorer()
    before = explorer.canvas.head_numbers[0].get_texts()
    explorer.causal.value = True
    assert explorer.canvas.head_numbers[0].get_texts() != before


def test_cell_numbers_are_dropped_when_the_cells_are_too_small():
    n = 12
    weights = torch.softmax(torch.randn(8, n, n), dim=-1)
    canvas = HeadGridCanvas()
    canvas.draw(weights, torch.randn(n, 16), torch.randn(n, 16), [f"t{i}" for i in range(n)])
    assert canvas.head_numbers == [None] * 8
    assert canvas.concat_numbers is None and canvas.output_numbers is None
    assert canvas.png().startswith(b"\x89PNG")
    # The token labels thin out rather than overlap: every other one at n = 12.
    assert [t.get_text() for t in canvas.head_axes[0].get_yticklabels()] == [
        f"t{i}" for i in range(0, n, 2)
    ]


@pytest.mark.parametrize(
    ("value", "weight", "other"),
    [(0.0, "0", "0"), (1.0, "1", "1.00"), (0.234, ".23", ".23"), (-0.004, "0", "0")],
)
def test_cell_text_is_short(value, weight, other):
    assert weight_text(value) == weight
    assert value_text(value) == other
    assert value_text(-0.31) == "-.31" and value_text(1.25) == "1.25"


@pytest.mark.parametrize("causal", [False, True])
def test_the_explorer_computes_what_nn_multihead_attention_does(causal):
    # at every head count it offers, with its weights copied into PyTorch's own layer
    explorer = make_explorer(causal=causal)
    blocked = torch.ones(5, 5, dtype=torch.bool).triu(1)  # nn.MultiheadAttention: True = blocked
    for n_heads in explorer.heads.options:  # what the slider would show, computed directly
        _, concat, output = explorer.compute(n_heads)
        with torch.no_grad():
            theirs, _ = copy_to_torch(explorer.module(n_heads))(
                explorer.x, explorer.x, explorer.x, attn_mask=blocked if causal else None
            )
        assert torch.allclose(output, theirs, atol=1e-6), n_heads
        assert concat.shape == (5, 8)


def test_tokens_are_escaped_in_the_readout():
    from nbhelpers import MultiHeadExplorer

    tokens = ["<b>", "x", "&"]
    explorer = MultiHeadExplorer(
        tokens, torch.randn(3, 8, generator=torch.Generator().manual_seed(0))
    )
    assert "&lt;b&gt;" in explorer.readout.value or "&amp;" in explorer.readout.value
    assert "<b><b></b>" not in explorer.readout.value
