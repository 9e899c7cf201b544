import io
import warnings

import matplotlib.pyplot as plt
import numpy as np
import PIL.Image
import pytest
import torch
from matplotlib.figure import Figure

from layout import cell_texts
from nbhelpers import HeatmapCanvas, attention_heatmap, figure_to_png
from nbhelpers.figures import BarCanvas
from nbhelpers.figures.style import course_font

TOKENS = ["犬", "が", "河岸", "を", "歩く"]


def test_japanese_sentence_renders_without_missing_glyphs():
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # "Glyph ... missing from font" is a UserWarning
        figure_to_png(attention_heatmap(np.eye(5), TOKENS, TOKENS, title="犬が河岸を歩く"))

        # a figure of one's own, made in the course's font (its texts take it when made)
        @course_font
        def own():
            figure = Figure()
            figure.add_subplot().set_title("犬が河岸を歩く")
            return figure

        figure_to_png(own())


def test_heatmap_is_a_pure_figure_with_colorbar_and_annotations():
    before = plt.get_fignums()
    weights = torch.softmax(torch.randn(5, 5), dim=-1)
    figure = attention_heatmap(weights, TOKENS, TOKENS)
    assert isinstance(figure, Figure)
    assert plt.get_fignums() == before  # nothing went through pyplot's state
    heatmap_ax, colorbar_ax = figure.axes
    texts = cell_texts(heatmap_ax)
    assert texts[:2] == [f"{weights[0, 0]:.2f}", f"{weights[0, 1]:.2f}"]
    assert len(texts) == 25
    assert [t.get_text() for t in heatmap_ax.get_xticklabels()] == TOKENS
    assert colorbar_ax.get_ylabel() == "attention weight"


def test_masked_cells_are_drawn_distinctly():
    weights = np.tril(np.ones((4, 4))) / np.arange(1, 5)[:, None]
    masked = np.triu(np.ones((4, 4), dtype=bool), 1)
    figure = attention_heatmap(weights, masked=masked)
    texts = np.array(cell_texts(figure.axes[0])).reshape(4, 4)
    assert (texts[masked] == "×").all()
    assert (texts[~masked] != "×").all()
    image = figure.axes[0].images[0].get_array()
    assert np.array_equal(np.ma.getmaskarray(image), masked)


def test_large_matrices_are_not_annotated():
    figure = attention_heatmap(np.full((20, 20), 0.05))
    assert cell_texts(figure.axes[0]) == []


def test_canvas_redraw_reuses_artists_and_changes_pixels():
    canvas = HeatmapCanvas()
    canvas.draw(np.eye(3))
    first_image, first_png = canvas.ax.images[0], canvas.png()
    canvas.draw(np.ones((3, 3)) / 3)
    assert canvas.ax.images[0] is first_image
    assert canvas.png() != first_png
    canvas.draw(np.eye(4))  # a new shape rebuilds
    assert len(cell_texts(canvas.ax)) == 16


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"weights": np.ones(3)}, "weights must be a 2-D"),
        ({"weights": np.ones((2, 2)), "row_labels": ["a"]}, "row_labels has 1 labels"),
        ({"weights": np.ones((2, 2)), "col_labels": list("abc")}, "col_labels has 3 labels"),
        ({"weights": np.ones((2, 2)), "masked": np.ones((3, 3))}, "masked must have the shape"),
    ],
)
def test_bad_heatmap_input_is_named(kwargs, message):
    with pytest.raises(ValueError, match=message):
        attention_heatmap(**kwargs)


def test_activation_figure_is_pure_and_draws_both_panels():
    from matplotlib.figure import Figure

    from nbhelpers import activation_figure

    figure = activation_figure()
    assert isinstance(figure, Figure) and len(figure.axes) == 2
    curves, gap = figure.axes
    assert [line.get_label() for line in curves.get_lines()][:3] == [
        "ReLU  max(0, x)",
        "GELU  x Φ(x)",
        "GELU, tanh form (GPT-1)",
    ]
    # the right panel is in units of 1e-3: the tanh form is within 1e-3 of the exact GELU
    assert abs(gap.get_lines()[0].get_ydata()).max() < 1.0


def test_a_log_scale_heatmap_colours_decades_apart_and_leaves_zeros_masked():
    import numpy as np

    from nbhelpers import HeatmapCanvas

    canvas = HeatmapCanvas(vmin=None, vmax=None, log_scale=True, colorbar_label="change")
    values = np.array([[0.0, 1e-3], [1e-1, 1.0]])
    canvas.draw(values, masked=values == 0)
    low, high = canvas.ax.images[0].get_clim()
    assert (low, high) == (1e-3, 1.0)  # the smallest positive value, not 0
    assert canvas.png().startswith(b"\x89PNG")


def test_attention_heatmaps_draw_one_panel_per_head_on_one_scale():
    import numpy as np
    import pytest

    from nbhelpers import attention_heatmaps

    weights = np.full((3, 4, 4), 0.25)
    figure = attention_heatmaps(weights, list("abcd"), highlight_row=2)
    panels = [ax for ax in figure.axes if ax.images]
    assert len(panels) == 3
    assert all(ax.images[0].get_clim() == (0.0, 1.0) for ax in panels)
    with pytest.raises(ValueError, match=r"weights must be \(h, n, n\)"):
        attention_heatmaps(np.ones((4, 4)), list("abcd"))
    with pytest.raises(ValueError, match="titles has 1 entries but there are 3 heads"):
        attention_heatmaps(weights, list("abcd"), titles=["one"])


def test_the_shape_flow_diagram_labels_every_matrix_with_its_shape():
    import pytest

    from nbhelpers import shape_flow_figure

    figure = shape_flow_figure(5, 8, 2, 3)
    texts = " ".join(t.get_text() for t in figure.axes[0].texts)
    for shape in ("5 × 8", "5 × 2", "5 × 3", "5 × 5", "8 × 2", "8 × 3"):
        assert shape in texts
    with pytest.raises(ValueError, match="d_k must be a positive int, got 0"):
        shape_flow_figure(5, 8, 0, 3)


def test_teacher_forcing_shows_each_position_its_prefix_and_its_target():
    import pytest

    from nbhelpers import teacher_forcing_figure

    figure = teacher_forcing_figure(["<SOS>", "犬", "が"])
    texts = [t.get_text() for t in figure.axes[0].texts]
    assert texts.count("<SOS>") == 2 and texts.count("×") == 1  # row 1 sees 1 key, row 2 two
    assert "犬" in texts and "が" in texts  # the targets
    with pytest.raises(ValueError, match="at least 2 tokens"):
        teacher_forcing_figure(["犬"])


def test_labels_that_a_control_changes_are_painted_without_a_full_render():
    canvas = HeatmapCanvas()
    renders = []
    canvas.canvas.mpl_connect("draw_event", lambda _event: renders.append(1))
    weights = np.full((3, 3), 1 / 3)
    for cols in ("abc", "abd"):  # the first change of the keys' labels renders once more
        canvas.draw(weights, list("xyz"), list(cols))
        canvas.png()
    before = len(renders)
    for cols in ("abe", "abf"):
        canvas.draw(weights, list("xyz"), list(cols))
        blitted = canvas.png()
    assert len(renders) == before, "a new label re-rendered the whole figure"
    full = attention_heatmap(weights, list("xyz"), list("abf"))

    def pixels(png):
        return np.asarray(PIL.Image.open(io.BytesIO(png)).convert("RGB")).astype(int)

    difference = np.abs(pixels(blitted) - pixels(figure_to_png(full))).max(axis=-1)
    assert (difference > 40).mean() < 1e-3, "the blitted frame differs from a full render"


def test_a_blitted_bar_chart_shows_what_a_full_render_shows():
    canvas = BarCanvas(blit=True)
    series = {"model": [0.2, 0.5, 0.3], "true": [0.1, 0.1, 0.8]}
    canvas.draw(series, ["a", "b", "c"], ylim=(0, 1.05), title="first")
    canvas.png()
    # new heights (one reaching the legend), new labels, a new title
    series = {"model": [0.05, 0.05, 0.9], "true": [0.0, 0.02, 0.98]}
    canvas.draw(series, ["a", "d", "e"], ylim=(0, 1.05), title="second")
    blitted = canvas.png()
    full = BarCanvas().draw(series, ["a", "d", "e"], ylim=(0, 1.05), title="second")

    def pixels(png):
        return np.asarray(PIL.Image.open(io.BytesIO(png)).convert("RGB")).astype(int)

    difference = np.abs(pixels(blitted) - pixels(figure_to_png(full))).max(axis=-1)
    assert (difference > 40).mean() < 1e-3, "the blitted frame differs from a full render"


def test_moving_back_and_forth_between_two_colour_scales_renders_each_once():
    canvas = HeatmapCanvas(vmin=None, vmax=None)  # the colour bar follows the values
    renders = []
    canvas.canvas.mpl_connect("draw_event", lambda _event: renders.append(1))
    small, large = np.eye(3), 4 * np.eye(3)
    for weights in (small, large, small, large, small):
        canvas.draw(weights)
        png = canvas.png()
    assert len(renders) == 2, "each colour scale's background is rendered once and kept"
    assert png == figure_to_png_of(canvas, small)


def figure_to_png_of(canvas, weights):
    """The blitted PNG of a fresh canvas showing `weights`: the same pixels."""
    fresh = HeatmapCanvas(vmin=None, vmax=None)
    fresh.draw(weights)
    return fresh.png()
