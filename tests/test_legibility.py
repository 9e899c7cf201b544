"""Every figure the course shows is sharp and legible: at least DPI dots per inch, no text
below MIN_FONT_PT, and no text overlapping another or sticking out of the figure (in English
and in Japanese), in the pure figure builders and in every explorer's canvas. The figures the
notebooks themselves show are checked the same way while nbval runs them (conftest.py)."""

from __future__ import annotations

import inspect
import math

import matplotlib.text
import pytest
import torch
from matplotlib.figure import Figure

import nbhelpers.widgets as explorers
from explorer_checks import EXPLORERS
from layout import layout_problems
from nbhelpers import GPT1
from nbhelpers.corpus import JapaneseGrammar
from nbhelpers.experiments.deep_stack import compare_stacks
from nbhelpers.experiments.pretraining import corpus_model_config
from nbhelpers.figures import canvas as canvas_module
from nbhelpers.figures.canvas import DPI, MIN_FONT_PT, Canvas
from tensors import seeded_randn

TOKENS = ["犬", "が", "河岸", "を", "歩く"]
randn = seeded_randn(0)


def illegible(figure) -> list[str]:
    """What is wrong with `figure`: a low dpi, or texts drawn smaller than MIN_FONT_PT."""
    problems = [] if figure.dpi >= DPI else [f"dpi {figure.dpi} < {DPI}"]
    for text in figure.findobj(matplotlib.text.Text):
        if text.get_visible() and text.get_text().strip() and text.get_fontsize() < MIN_FONT_PT:
            problems.append(f"{text.get_text()!r} at {text.get_fontsize():g} pt")
    return problems


def canvases(explorer) -> list:
    """The explorer's canvases: its attributes (or their dict values) that hold a Figure."""
    values = [*vars(explorer).values()]
    values += [v for d in values if isinstance(d, dict) for v in d.values()]
    return [v for v in values if isinstance(getattr(v, "figure", None), Figure)]


@pytest.fixture(scope="module")
def model():
    torch.manual_seed(0)
    grammar = JapaneseGrammar()
    return GPT1(corpus_model_config(grammar)).eval(), grammar


def test_every_explorer_has_a_legibility_check():
    found = {
        name
        for name in explorers.__all__
        if inspect.isclass(value := getattr(explorers, name))
        and issubclass(value, explorers.FigureExplorer)
        and value is not explorers.FigureExplorer
    }
    assert found <= EXPLORERS.keys(), f"add to EXPLORERS: {sorted(found - EXPLORERS.keys())}"


def test_the_check_catches_small_text_and_low_dpi():
    figure = Canvas(figsize=(2, 2), dpi=72).figure
    figure.text(0.5, 0.5, "tiny", fontsize=7)
    assert illegible(figure) == ["dpi 72 < 100", "'tiny' at 7 pt"]


def test_cell_numbers_are_dropped_rather_than_shrunk():
    canvas = canvas_module.Canvas(figsize=(3, 3))
    ax = canvas.figure.add_subplot()
    assert canvas_module.annotation_fits(ax, 5, 5)
    assert not canvas_module.annotation_fits(ax, 12, 12)  # cells narrower than "-0.00"


def _history():
    from nbhelpers.corpus.grammar import RULES
    from nbhelpers.experiments.pretraining import TrainingHistory

    return TrainingHistory(
        entropy_rate=1.0, heldout_true_loss=1.0, steps=[0, 10, 20], seconds=[0, 1, 2],
        kl=[2.0, 1.0, 0.5], heldout_loss=[3.0, 2.0, 1.5], train_loss=[3.1, 2.1, 1.6],
        kl_by_rule={rule: [2.0 / (k + 1), 1.0 / (k + 1), 0.1] for k, rule in enumerate(RULES)},
    )  # fmt: skip


CORPUS = ["犬が河岸を歩く", "猫が公園を走る", "毎朝小さな子供が静かな川をゆっくり泳ぐ"] * 3


def _builders():
    from nbhelpers import figures
    from nbhelpers.corpus.bpe import learn_bpe
    from nbhelpers.experiments.fine_tuning import load_curves
    from nbhelpers.experiments.fine_tuning_claims import load_claims
    from nbhelpers.figures.check_difference import check_difference_figure

    randn = seeded_randn(0)  # each test draws the same numbers, whatever ran before it
    weights = torch.softmax(randn(5, 5), -1)
    return {
        "activation_figure": lambda: figures.activation_figure(),
        "against_dk_figure": lambda: figures.against_dk_figure(
            [1, 4, 16], {"measured": [1.0, 2.0, 4.0]}, ylabel="std", theory={"√d_k": [1, 2, 4]}
        ),
        "attention_heatmap": lambda: figures.attention_heatmap(weights, TOKENS, TOKENS),
        "check_difference_figure": lambda: check_difference_figure(
            torch.zeros(5, 5).masked_fill(torch.ones(5, 5, dtype=torch.bool).triu(1), -math.inf),
            torch.zeros(5, 5).masked_fill(torch.ones(5, 5, dtype=torch.bool).tril(-1), -math.inf),
            title='causal_mask: case 2 of 3, "n = 5": n = 5',
        ),
        "attention_heatmaps": lambda: figures.attention_heatmaps(
            torch.stack([weights, weights.T.softmax(-1)]), TOKENS
        ),
        "attention_step_figure": lambda: figures.attention_step_figure(
            randn(5, 5), weights, randn(5, 4), 2, TOKENS, TOKENS
        ),
        "softmax_curve_figure": lambda: figures.softmax_curve_figure(randn(5), TOKENS),
        "weighted_rows_figure": lambda: figures.weighted_rows_figure(
            weights, randn(5, 3), 4, TOKENS
        ),
        "head_split_figure": lambda: figures.head_split_figure(5, 8, 4),
        "generation_loop_figure": lambda: figures.generation_loop_figure(["<SOS>", *TOKENS]),
        "kv_cache_diagram": lambda: figures.kv_cache_diagram(4),
        "online_softmax_figure": lambda: figures.online_softmax_figure(randn(12), 4),
        "position_embedding_figure": lambda: figures.position_embedding_figure(randn(20, 16)),
        "bar_chart": lambda: figures.bar_chart({"a": [1, 2, 3], "b": [2, 1, 0]}, ["x", "y", "z"]),
        "deep_stack_figure": lambda: figures.deep_stack_figure(
            compare_stacks(depth=6, d_model=16, n_heads=2)
        ),
        "gpt1_block_figure": lambda: figures.gpt1_block_figure(),
        "course_model_tour": lambda: figures.course_model_tour(),
        "transformer_vs_gpt1_figure": lambda: figures.transformer_vs_gpt1_figure(),
        "dot_product_geometry_figure": lambda: figures.dot_product_geometry_figure(
            torch.tensor([2.0, 0.5]), torch.tensor([1.0, 1.5])
        ),
        "embedding_figure": lambda: figures.embedding_figure(
            torch.tensor([2, 1, 4]), randn(5, 4), randn(3, 4), list("abcde")
        ),
        "head_grid_figure": lambda: figures.head_grid_figure(
            torch.stack([weights, weights]), randn(5, 8), randn(5, 8), TOKENS
        ),
        "accuracy_by_step_figure": lambda: figures.accuracy_by_step_figure(
            {"h = 1": ([0, 25, 50], [0.1, 0.15, 0.16]), "h = 2": ([0, 25, 50], [0.1, 0.6, 1.0])}
        ),
        "specialised_heads_figure": lambda: figures.specialised_heads_figure(
            torch.stack([torch.eye(5), torch.eye(5)[[0, 0, 1, 2, 3]]])
        ),
        "kv_cache_figure": lambda: figures.kv_cache_figure(
            [1, 2, 4], {"1 sentence": [1e-3, 2e-3, 4e-3]}, {"1 sentence": [1e-3, 1e-3, 1e-3]}
        ),
        "rule_kl_figure": lambda: figures.rule_kl_figure(_history()),
        "loglog_figure": lambda: figures.loglog_figure(
            {"time": ([128, 256, 512], [1.0, 4.0, 16.0])}, ylabel="seconds"
        ),
        "mask_steps_figure": lambda: figures.mask_steps_figure(
            randn(5, 5), torch.full((5, 5), float("-inf")).triu(1), TOKENS
        ),
        "next_token_figure": lambda: figures.next_token_figure(
            torch.tensor([0.5, 0.3, 0.2]), torch.tensor([0.6, 0.2, 0.2]), ["a", "b", "c"]
        ),
        "shape_flow_figure": lambda: figures.shape_flow_figure(5, 8, 4, 4),
        "teacher_forcing_figure": lambda: figures.teacher_forcing_figure(TOKENS),
        "training_figure": lambda: figures.training_figure(_history()),
        "weighted_average_figure": lambda: figures.weighted_average_figure(
            randn(5, 2), weights[0], TOKENS
        ),
        "bpe_figure": lambda: figures.bpe_figure(
            learn_bpe(CORPUS, 12),
            ["犬が河岸を歩く", "毎朝小さな子供が静かな川をゆっくり泳ぐ"],
            6,
            CORPUS,
        ),
        "token_rows_figure": lambda: figures.token_rows_figure(
            [["<SOS>", *TOKENS, "<DELIM>", *TOKENS, "<EXTRACT>"]],
            ["entailment"],
            title="GPT-1's input transformations",
        ),
        "fine_tuning_curves_figure": lambda: figures.fine_tuning_curves_figure(
            load_curves()["runs"], "entailment", 0.5, 128
        ),
        "zero_shot_figure": lambda: figures.zero_shot_figure(
            *_zero_shot_rows(), load_curves()["runs"]
        ),
        "probes_figure": lambda: figures.probes_figure(
            load_claims()["probes"], load_claims()["recipes"], load_curves()["runs"]
        ),
        "convergence_figure": lambda: figures.convergence_figure(load_claims()["auxiliary"]),
        "layers_figure": lambda: figures.layers_figure(load_claims()["layers"]),
        "fine_tuning_losses_figure": lambda: figures.fine_tuning_losses_figure(
            {"pre-trained": [(0.7, 5.0)] * 40, "no pre-training": [(0.69, 3.8)] * 40}, lam=0.5
        ),
    }


def _zero_shot_rows():
    """Rows shaped as measure_zero_shot's, without the model: (by_size, by_step)."""
    g = torch.Generator().manual_seed(0)
    methods = {"grammaticality": ("lowest", "mean")}

    def accuracy():
        return 0.5 + 0.5 * float(torch.rand((), generator=g))

    by_size, by_step = [], []
    for task, names in methods.items():
        by_size.append(dict(task=task, method="truth", n_labelled=None, seed=None, accuracy=0.95))
        for method in names:
            for seed in range(3):
                row = dict(task=task, method=method, seed=seed)
                by_size += [dict(row, n_labelled=n, accuracy=accuracy()) for n in (2, 16, 1024)]
                by_step += [
                    dict(row, n_labelled=16, accuracy=accuracy(), step=step)
                    for step in (0, 100, 300, 800)
                ]
    return by_size, by_step


def test_every_figure_builder_has_a_legibility_check():
    from nbhelpers import figures

    builders = {
        n for n in figures.__all__ if n[0].islower() and n not in ("figure_to_png", "show_figure")
    }
    assert builders <= _builders().keys(), (
        f"add to _builders: {sorted(builders - _builders().keys())}"
    )


@pytest.fixture(params=["en", "ja"])
def in_each_language(request):
    from nbhelpers.support import language

    language.set_language(request.param)
    yield request.param
    language.set_language(None)


# Rendering every figure and explorer twice is the figures' own nbval: the full run (make
# test) does it; the inner loop (make check) checks the checks themselves.
@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(_builders()))
def test_figure_builders_are_sharp_legible_and_laid_out(name, in_each_language):
    figure = _builders()[name]()
    assert not layout_problems(figure)  # lays the figure out as it is shown, then checks
    assert not illegible(figure), illegible(figure)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(EXPLORERS))
def test_explorer_figures_are_sharp_legible_and_laid_out(name, model, in_each_language):
    explorer = EXPLORERS[name](model)
    try:
        explorer.png()  # lays the figure out as it is shown
        if hasattr(explorer, "prepare"):  # every canvas a kernel lays out after the cell
            explorer.prepare()
        found = canvases(explorer)
        assert found, f"{name} keeps no Canvas among its attributes"
        for canvas in found:
            assert not layout_problems(canvas.figure)
            assert not illegible(canvas.figure), illegible(canvas.figure)
    finally:
        explorer.close()


def test_the_layout_check_catches_overlaps_and_clipping():
    figure = Canvas(figsize=(3, 2)).figure
    figure.text(0.5, 0.5, "0.24")
    figure.text(0.51, 0.5, "0.25")  # two bar labels drawn on top of each other
    figure.text(0.98, 0.1, "sticks out of the figure")
    problems = layout_problems(figure)
    assert "overlap: '0.24' and '0.25'" in problems
    assert "clipped: 'sticks out of the figure'" in problems
    clean = Canvas(figsize=(3, 2)).figure
    clean.text(0.1, 0.5, "fits")
    assert layout_problems(clean) == []
