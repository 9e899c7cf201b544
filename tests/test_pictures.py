"""The pictures that explain a step (02's softmax curve, 03's weighted rows, 05's head split,
06's position embeddings, 09's generation loop, 10's KV cache and online softmax) show the
numbers they are given, computed independently here, and name bad input."""

import math

import matplotlib.text
import pytest
import torch
import torch.nn.functional as F

from nbhelpers import running_example, similarity_scores
from nbhelpers.figures import (
    figure_to_png,
    generation_loop_figure,
    head_split_figure,
    kv_cache_diagram,
    online_softmax_figure,
    position_embedding_figure,
    softmax_curve_figure,
    weighted_rows_figure,
)


def texts(figure):
    figure_to_png(figure)
    return [t.get_text() for t in figure.findobj(matplotlib.text.Text) if t.get_text()]


@pytest.fixture(scope="module")
def example():
    return running_example(dtype=torch.float64)


def test_the_softmax_curve_labels_each_key_with_its_weight(example):
    s = similarity_scores(example.Q, example.K)[4]
    weights = F.softmax(s, dim=-1)
    shown = texts(softmax_curve_figure(s, example.tokens))
    for token, weight in zip(example.tokens, weights, strict=True):
        assert f"{token}: {weight:.2f}" in shown
    with pytest.raises(ValueError, match="finite numbers"):
        softmax_curve_figure(torch.tensor([1.0, math.inf]))


def test_the_weighted_rows_sum_to_the_attention_output(example):
    A = F.softmax(similarity_scores(example.Q, example.K), dim=-1)
    expected = F.scaled_dot_product_attention(example.Q, example.K, example.V)[4]
    figure = weighted_rows_figure(A, example.V, 4, example.tokens)
    output_panel = figure.axes[2]
    shown = [t.get_text() for t in output_panel.texts]
    assert shown == [f"{v:.2f}" for v in expected.tolist()]
    with pytest.raises(ValueError, match="the same m"):
        weighted_rows_figure(A, example.V[:3], 4)
    with pytest.raises(ValueError, match="query must be a row index"):
        weighted_rows_figure(A, example.V, 5)


def test_the_online_softmax_ends_at_the_softmax_denominator():
    scores = torch.randn(10, generator=torch.Generator().manual_seed(0))
    shown = [t for t in texts(online_softmax_figure(scores, 4)) if t.startswith("μ = ")]
    assert len(shown) == 3  # 4 + 4 + 2 keys
    largest = float(scores.max())
    denominator = float(torch.exp(scores - largest).sum())  # computed at once, not blockwise
    assert shown[-1].startswith(f"μ = {largest:.2f}\n")
    assert shown[-1].endswith(f" = {denominator:.2f}")  # old × rescale + new = the softmax's
    with pytest.raises(ValueError, match="block must be a positive int"):
        online_softmax_figure(scores, 0)


def test_the_head_split_draws_each_head_and_its_shapes():
    shown = texts(head_split_figure(5, 8, 2))
    assert shown.count("head 0") == 2 and shown.count("head 1") == 2
    assert "(2, 5, 4)" in shown and "(5, 8)" in shown
    with pytest.raises(ValueError, match="not divisible"):
        head_split_figure(5, 8, 3)


def test_the_generation_loop_feeds_each_pick_back():
    sentence = ["<SOS>", "犬", "が", "歩く", "<EOS>"]
    shown = texts(generation_loop_figure(sentence))
    assert shown.count("<SOS>") == 4  # the first input of every step
    assert shown.count("<EOS>") == 1  # picked at the last step only
    with pytest.raises(ValueError, match="at least <SOS> and one generated token"):
        generation_loop_figure(["<SOS>"])


def test_the_kv_cache_diagram_adds_one_row_per_step():
    shown = texts(kv_cache_diagram(3))
    assert shown.count("$k_{0}$") == 3 and shown.count("$k_{2}$") == 1
    with pytest.raises(ValueError, match="steps must be at most 8"):
        kv_cache_diagram(9)


def test_the_position_embedding_figure_compares_every_pair_of_rows():
    W_p = torch.eye(4)
    figure = position_embedding_figure(W_p)
    similarity = figure.axes[1].get_images()[0].get_array()  # the right panel: cos(row i, row j)
    assert torch.allclose(torch.as_tensor(similarity.data), torch.eye(4, dtype=torch.float64))
    with pytest.raises(ValueError, match=r"W_p must be a matrix"):
        position_embedding_figure(torch.zeros(3))
