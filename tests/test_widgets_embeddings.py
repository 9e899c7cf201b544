import matplotlib.pyplot as plt
import numpy as np
import pytest
import torch
from matplotlib.figure import Figure

from explorer_checks import assert_shows_a_figure
from layout import cell_texts
from nbhelpers import EmbeddingCanvas, EmbeddingExplorer, embedding_figure, one_hot

VOCAB = ["犬", "猫", "が", "河岸", "を", "歩く"]
SENTENCE = ["犬", "が", "河岸", "を", "歩く"]


def make_explorer(**kwargs):
    return EmbeddingExplorer(VOCAB, SENTENCE, **kwargs)


def test_explorer_draws_png_and_shows_the_sentence():
    explorer = make_explorer()
    assert_shows_a_figure(explorer)
    assert explorer.tokens() == SENTENCE
    assert explorer.ids().tolist() == [0, 2, 3, 4, 5]
    assert "rows 1, 3, 4, 5, 6 of W_e" in explorer.readout.value


def test_h0_is_the_one_hot_product_plus_positions():
    explorer = make_explorer()
    ids = explorer.ids()
    expected = explorer.W_e[ids] + explorer.W_p[: len(ids)]
    assert torch.allclose(explorer.h0(), expected, atol=1e-6, rtol=0)
    assert torch.equal(explorer.U(), one_hot(ids, len(VOCAB)))


def test_choosing_a_token_redraws_image_and_readout():
    explorer = make_explorer()
    before_png, before_text = explorer.png(), explorer.readout.value
    explorer.token_pickers[2].value = VOCAB.index("犬")
    assert explorer.png() != before_png
    assert explorer.readout.value != before_text
    assert "positions 0 and 2" in explorer.readout.value  # counted from 0
    h0 = explorer.h0()
    assert not torch.allclose(h0[0], h0[2])  # W_p tells the two 犬 apart


def test_without_positions_a_repeated_token_gives_identical_rows():
    explorer = make_explorer()
    explorer.token_pickers[2].value = 0
    before = explorer.png()
    explorer.positions.value = False
    assert explorer.png() != before
    h0 = explorer.h0()
    assert torch.equal(h0[0], h0[2])
    assert "cannot tell" in explorer.readout.value


def test_given_matrices_are_used():
    W_e = torch.arange(12.0).reshape(6, 2)
    W_p = torch.zeros(8, 2)
    explorer = make_explorer(W_e=W_e, W_p=W_p)
    assert torch.equal(explorer.h0(), W_e[explorer.ids()])


def test_repr_is_short_and_stable():
    explorer = make_explorer()
    explorer.token_pickers[0].value = 1
    assert repr(explorer) == "EmbeddingExplorer(5 positions, vocabulary of 6)"


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"sentence": ["犬", "狐"]}, ValueError, r"sentence must be .*unknown: \['狐'\]"),
        ({"sentence": []}, ValueError, "sentence must be 1 or more tokens"),
        ({"vocab": ["犬"], "sentence": ["犬"]}, ValueError, "vocab must hold at least 2"),
        ({"vocab": ["犬", "犬"], "sentence": ["犬"]}, ValueError, "vocab must hold at least 2"),
        ({"W_e": torch.zeros(5, 3)}, ValueError, r"W_e must have one row per vocabulary"),
        ({"W_e": [[0.0]]}, TypeError, "W_e must be a torch.Tensor"),
        ({"W_e": torch.zeros(6, 3, dtype=torch.long)}, ValueError, "W_e must be a 2-D float"),
        ({"W_p": torch.zeros(4, 6)}, ValueError, "W_p must have a row for each of the 5"),
        ({"W_p": torch.zeros(5, 2)}, ValueError, "W_p must have a row for each of the 5"),
        ({"d_model": 0}, ValueError, "d_model must be a positive int"),
    ],
)
def test_bad_input_is_named(kwargs, error, message):
    settings = {"vocab": VOCAB, "sentence": SENTENCE} | kwargs
    with pytest.raises(error, match=message):
        EmbeddingExplorer(settings.pop("vocab"), settings.pop("sentence"), **settings)


# --- the pure figure builder ---------------------------------------------------------------


def test_embedding_figure_is_pure_and_shows_h0():
    before = plt.get_fignums()
    W_e = torch.randn(5, 4, generator=torch.Generator().manual_seed(0))
    figure = embedding_figure([2, 1, 4], W_e, torch.zeros(3, 4), list("12345"), positions=False)
    assert isinstance(figure, Figure)
    assert plt.get_fignums() == before
    canvas = EmbeddingCanvas()
    canvas.draw([2, 1, 4], W_e, torch.zeros(3, 4), list("12345"))
    shown = np.asarray(canvas.ax_h0.images[0].get_array())
    assert np.allclose(shown, W_e[[2, 1, 4]].numpy())
    ones = cell_texts(canvas.ax_U)
    assert ones[:5] == ["0", "0", "1", "0", "0"]


def test_canvas_redraw_reuses_artists():
    canvas = EmbeddingCanvas()
    W_e, W_p = torch.randn(6, 3), torch.randn(4, 3)
    canvas.draw([0, 1, 2], W_e, W_p, VOCAB)
    image, first = canvas.ax_h0.images[0], canvas.png()
    canvas.draw([5, 1, 2], W_e, W_p, VOCAB)
    assert canvas.ax_h0.images[0] is image
    assert canvas.png() != first
    canvas.draw([5, 1, 2, 3], W_e, W_p, VOCAB)  # a new length rebuilds
    assert canvas.ax_h0.images[0] is not image


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ([0, 6], torch.zeros(6, 2), torch.zeros(2, 2), VOCAB),
            r"ids must lie in \[0, n_vocab=6\)",
        ),
        (([0.5], torch.zeros(6, 2), torch.zeros(2, 2), VOCAB), "ids must hold integer"),
        (([[0]], torch.zeros(6, 2), torch.zeros(2, 2), VOCAB), "ids must be a 1-D"),
        (([0], torch.zeros(6), torch.zeros(2, 2), VOCAB), "W_e must be a 2-D"),
        (([0, 1, 2], torch.zeros(6, 2), torch.zeros(2, 2), VOCAB), "W_p must be a 2-D"),
        (([0], torch.zeros(6, 2), torch.zeros(2, 2), VOCAB[:3]), "vocab has 3 tokens"),
    ],
)
def test_bad_figure_input_is_named(args, message):
    with pytest.raises(ValueError, match=message):
        embedding_figure(*args)


def test_the_blitted_picture_is_the_full_render():
    from io import BytesIO

    from PIL import Image

    from nbhelpers.figures.canvas import figure_to_png

    def pixels(png):
        return np.asarray(Image.open(BytesIO(png)).convert("RGB"))

    explorer = EmbeddingExplorer()
    pickers = explorer.token_pickers
    for picker, index in ((pickers[0], 2), (pickers[2], 0), (pickers[0], 5)):
        picker.index = index
        assert np.array_equal(
            pixels(explorer.png()), pixels(figure_to_png(explorer.canvas.figure))
        ), (picker.description, index)
    explorer.positions.value = not explorer.positions.value
    assert np.array_equal(pixels(explorer.png()), pixels(figure_to_png(explorer.canvas.figure)))
    explorer.close()
