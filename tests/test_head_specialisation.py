"""Notebook 05's heads that specialise: the task, the trained heads, the figures."""

from __future__ import annotations

import matplotlib.text
import pytest
import torch

from nbhelpers.experiments.head_specialisation import (
    HeadShares,
    SubjectPreviousModel,
    accuracy,
    head_shares,
    subject_previous_batch,
    train_heads,
)
from nbhelpers.figures.canvas import figure_to_png
from nbhelpers.figures.specialised_heads import accuracy_by_step_figure, specialised_heads_figure
from tensors import copy_to_torch


@pytest.fixture(scope="module")
def trained():
    """h = 1 and h = 2 trained as in notebook 05 (about a second or two each)."""
    return {h: train_heads(h, seed=0) for h in (1, 2)}


def test_targets_are_the_subject_and_the_previous_token():
    tokens, targets = subject_previous_batch(5, 8, 64, torch.Generator().manual_seed(0))
    assert tokens.shape == (5, 8) and targets.shape == (5, 7, 2)
    assert tokens.dtype == targets.dtype == torch.int64
    assert 0 <= int(tokens.min()) and int(tokens.max()) < 64
    for i in range(1, 8):
        assert torch.equal(targets[:, i - 1, 0], tokens[:, 0])  # the subject
        assert torch.equal(targets[:, i - 1, 1], tokens[:, i - 1])  # the previous token
    again, _ = subject_previous_batch(5, 8, 64, torch.Generator().manual_seed(0))
    assert torch.equal(tokens, again)


@pytest.mark.slow  # trains two models
def test_two_heads_specialise_and_name_both_tokens(trained):
    result = trained[2]
    assert result.accuracy.both >= 0.99
    previous, first = sorted(result.shares, key=lambda share: -share.previous)
    assert previous.role == "previous token" and previous.previous >= 0.9 >= 10 * previous.first
    assert first.role == "first token" and first.first >= 0.9 >= 10 * first.previous


@pytest.mark.slow  # trains two models
def test_one_head_does_clearly_worse_with_the_same_budget(trained):
    one, two = trained[1].accuracy, trained[2].accuracy
    assert one.both <= 0.5 and one.both < two.both - 0.4
    (share,) = trained[1].shares  # one head: its weight is split, not on one key
    assert share.previous < 0.9 and share.first < 0.9
    # the accuracy split by position: the previous-token accuracy is a weighted mean of i = 1
    # (one position of seven) and i >= 2 (six of seven)
    for acc in (one, two):
        assert abs(acc.previous - (acc.previous_at_1 + 6 * acc.previous_after_1) / 7) < 1e-6
    # seed 0: the one head learned the subject, so at i = 1 it names the previous token too,
    # and after that it is near chance (1/64)
    assert one.previous_at_1 >= 0.95 and one.previous_after_1 < 0.05


@pytest.mark.slow  # trains two models
def test_the_stored_maps_are_the_models_weights(trained):
    result = trained[2]
    tokens, _ = subject_previous_batch(1000, 8, 64, torch.Generator().manual_seed(12345))
    with torch.no_grad():
        _, weights = result.model(tokens, return_weights=True)
    assert torch.allclose(result.weights, weights.mean(0), atol=1e-6)
    assert result.weights.shape == (2, 8, 8)
    assert torch.all(result.weights.triu(1) == 0)  # causal
    assert len(result.history_steps) == len(result.history_accuracy) == 13  # 0, 25, ..., 300


@pytest.mark.slow  # trains two models
def test_the_trained_heads_weights_are_what_nn_multihead_attention_computes(trained):
    tokens, _ = subject_previous_batch(4, 8, 64, torch.Generator().manual_seed(1))
    model = trained[2].model
    blocked = torch.ones(8, 8, dtype=torch.bool).triu(1)  # True = blocked
    with torch.no_grad():
        x = model.embed(tokens)
        _, ours = model.attn(x, return_weights=True)
        _, theirs = copy_to_torch(model.attn)(
            x, x, x, attn_mask=blocked, average_attn_weights=False
        )
    assert torch.allclose(ours, theirs, atol=1e-6)


def test_training_is_seeded_and_leaves_the_callers_rng_alone():
    torch.manual_seed(123)
    state, threads = torch.get_rng_state(), torch.get_num_threads()
    first = train_heads(2, seed=3, steps=20)
    assert torch.equal(torch.get_rng_state(), state)
    assert torch.get_num_threads() == threads  # set to 1 while training, then restored
    second = train_heads(2, seed=3, steps=20)
    assert torch.equal(first.weights, second.weights)
    assert first.accuracy == second.accuracy
    other = train_heads(2, seed=4, steps=20)
    assert not torch.equal(first.weights, other.weights)


def test_head_shares_measures_known_patterns():
    n = 6
    previous = torch.zeros(n, n)
    previous[0, 0] = 1.0
    previous[torch.arange(1, n), torch.arange(n - 1)] = 1.0
    first = torch.zeros(n, n)
    first[:, 0] = 1.0
    uniform = torch.tril(torch.ones(n, n))
    uniform = uniform / uniform.sum(-1, keepdim=True)
    shares = head_shares(torch.stack([previous, first, uniform]))
    assert shares[0] == HeadShares(previous=1.0, first=0.0)
    assert shares[1] == HeadShares(previous=0.0, first=1.0)
    expected = sum(1 / (i + 1) for i in range(2, n)) / (n - 2)  # 1/(i+1) on each key
    assert shares[2].previous == pytest.approx(expected) == shares[2].first
    assert shares[0].role == "previous token" and shares[1].role == "first token"
    batched = head_shares(torch.stack([previous, first]).expand(3, 2, n, n))
    assert batched == shares[:2]  # leading batch axes are averaged over


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (lambda: subject_previous_batch(4, 2, 64), ValueError, r"n must be an int >= 3"),
        (lambda: subject_previous_batch(0, 8, 64), ValueError, "batch_size must be a positive"),
        (lambda: subject_previous_batch(4, 8, 64, 0), TypeError, "generator must be"),
        (lambda: head_shares(torch.ones(2, 4, 4)), ValueError, "each row summing to 1"),
        (lambda: head_shares(torch.eye(4)), ValueError, r"\(\.\.\., n_h, n, n\)"),
        (lambda: head_shares(torch.ones(1, 3, 4) / 4), ValueError, "one square matrix"),
        (lambda: head_shares(torch.ones(1, 2, 2) / 2), ValueError, "n >= 3"),
        (lambda: head_shares(torch.ones(1, 4, 4, dtype=torch.int64)), TypeError, "floating"),
        (lambda: head_shares([[0.5, 0.5]]), TypeError, "got list"),
        (lambda: train_heads(0), ValueError, "n_heads must be a positive int"),
        (lambda: train_heads(3), ValueError, "d_model=8 is not divisible by n_heads=3"),
        (lambda: train_heads(2, lr=0), ValueError, "lr must be a positive number"),
        (lambda: train_heads(2, steps=0), ValueError, "steps must be a positive int"),
        (lambda: train_heads(2, seed=-1), ValueError, r"seed must be an int in \[0, 2\*\*32\)"),
        (lambda: train_heads(2, cpu_threads=0), ValueError, "cpu_threads must be"),
        (lambda: SubjectPreviousModel(64, 8, 8, 2)(torch.ones(1, 9).long()), ValueError, "n_ctx"),
        (lambda: SubjectPreviousModel(64, 8, 8, 2)(torch.full((1, 4), 64)), ValueError, "vocab"),
        (lambda: SubjectPreviousModel(64, 8, 8, 2)(torch.zeros(1, 4)), TypeError, "integer"),
        (
            lambda: accuracy(
                SubjectPreviousModel(64, 8, 8, 2),
                torch.zeros(2, 8).long(),
                torch.zeros(2, 8, 2).long(),
            ),
            ValueError,
            r"targets must be \(\.\.\., n - 1, 2\)",
        ),  # fmt: skip
        (lambda: accuracy(torch.nn.Linear(1, 1), None, None), TypeError, "SubjectPreviousModel"),
    ],
)
def test_bad_input_is_named(call, error, message):
    with pytest.raises(error, match=message):
        call()


def _texts(figure):
    return [t for t in figure.findobj(matplotlib.text.Text) if t.get_text().strip()]


@pytest.mark.slow  # trains two models
def test_the_maps_figure_is_sharp_legible_and_titled_with_the_measured_shares(trained):
    maps = torch.cat([trained[1].weights, trained[2].weights])
    figure = specialised_heads_figure(maps, ["n_h = 1", "n_h = 2: head 0", "n_h = 2: head 1"])
    png = figure_to_png(figure)
    assert figure.dpi >= 100 and png.startswith(b"\x89PNG")
    assert all(t.get_fontsize() >= 9 for t in _texts(figure))
    titles = [ax.get_title() for ax in figure.axes if ax.get_title()]
    shares = [*trained[1].shares, *trained[2].shares]
    for title, share in zip(titles, shares, strict=True):
        main = max(share.previous, share.first)
        assert f"{main:.2f} of its weight on the {share.role}" in title
    cells = [text.get_text() for ax in figure.axes for text in ax.texts]
    assert len(cells) == 3 * 36  # every visible cell of the three 8 x 8 causal maps
    assert cells[0] == cells[36] == cells[72] == "1"  # query 0 sees key 0 only


def test_the_maps_figure_drops_numbers_it_cannot_fit_and_names_bad_input():
    n = 24
    weights = torch.tril(torch.ones(n, n))
    figure = specialised_heads_figure((weights / weights.sum(-1, keepdim=True))[None])
    assert not [t for t in figure.axes[0].texts]  # 24 x 24 cells: too small for 9-pt numbers
    with pytest.raises(ValueError, match=r"weights must be \(k, n, n\)"):
        specialised_heads_figure(torch.eye(4))
    with pytest.raises(ValueError, match="names has 1 entries but weights holds 2 heads"):
        specialised_heads_figure(torch.eye(4).expand(2, 4, 4), ["one"])


@pytest.mark.slow  # trains two models
def test_the_accuracy_figure_builds_and_names_bad_input(trained):
    curves = {f"h = {h}": (r.history_steps, r.history_accuracy) for h, r in trained.items()}
    figure = accuracy_by_step_figure(curves)
    figure_to_png(figure)
    assert figure.dpi >= 100 and all(t.get_fontsize() >= 9 for t in _texts(figure))
    assert len(figure.axes[0].lines) == 2
    with pytest.raises(ValueError, match="non-empty mapping"):
        accuracy_by_step_figure({})
    with pytest.raises(ValueError, match="one non-zero length"):
        accuracy_by_step_figure({"h = 1": ([0, 1], [0.5])})
