"""The explorers of notebooks 06 (BPE) and 11 (fine-tuning): each control redraws the
picture, and what the readout says matches the numbers behind it."""

from __future__ import annotations

import numpy as np
import pytest

from explorer_checks import assert_redraws
from layout import layout_problems
from nbhelpers import BPEExplorer, ConvergenceExplorer, FineTuningCurvesExplorer, TaskInputExplorer
from nbhelpers.experiments.fine_tuning import load_curves
from nbhelpers.figures.sprite_text import sprite
from nbhelpers.figures.tokens import LINE_UNITS, wrap_tokens
from nbhelpers.widgets.fine_tuning import KINDS, task_rows


@pytest.fixture(scope="module")
def bpe_explorer():
    return BPEExplorer(n_merges=30, corpus_size=300)


def test_the_bpe_explorer_segments_and_lists_the_latest_merges(bpe_explorer):
    bpe_explorer.unit.value = "char"
    bpe_explorer.merges.value = 0
    assert bpe_explorer.tokens() == list("犬が河岸を歩く")
    assert "no merges yet" in bpe_explorer.readout.value
    assert_redraws(bpe_explorer, "merges", 10)
    assert len(bpe_explorer.tokens()) < 7
    last = bpe_explorer.bpe.merges[9]
    assert f"merge 10: {last.pair[0]} + {last.pair[1]}" in bpe_explorer.readout.value


def test_the_bpe_explorer_shows_bytes_that_split_a_character_in_hex(bpe_explorer):
    bpe_explorer.merges.value = 0
    assert_redraws(bpe_explorer, "unit", "byte", readout=False)
    tokens = bpe_explorer.tokens()
    assert len(tokens) == len("犬が河岸を歩く".encode()) and tokens[0] == "e7"


def test_long_rows_of_bytes_wrap_instead_of_crowding_their_labels(bpe_explorer):
    bpe_explorer.unit.value, bpe_explorer.merges.value = "byte", 0
    tokens = bpe_explorer.bpe.encode(bpe_explorer.sentences[1], 0)
    lines = wrap_tokens(tokens)
    assert [t for line in lines for t in line] == tokens and len(lines) == 3
    assert all(0.9 * len(line) <= LINE_UNITS for line in lines)  # a byte's box is 0.9 wide
    assert layout_problems(bpe_explorer.canvas.figure) == []
    bpe_explorer.unit.value = "char"  # back to one line per sentence, the figure shorter
    assert layout_problems(bpe_explorer.canvas.figure) == []


def test_the_bpe_explorer_names_a_character_the_corpus_lacks():
    with pytest.raises(ValueError, match="symbols the corpus never had"):
        BPEExplorer(["象が歩く"], n_merges=2, corpus_size=50)


@pytest.mark.parametrize("kind", KINDS)
def test_each_task_becomes_sequences_from_sos_to_extract(kind):
    rows, labels = task_rows(kind, 1)
    assert len(rows) == len(labels) == {"similarity": 2, "multiple choice": 3}.get(kind, 1)
    assert all(r[0] == "<SOS>" and r[-1] == "<EXTRACT>" for r in rows)
    assert all(r.count("<DELIM>") == (kind != "classification") for r in rows)


@pytest.mark.parametrize("kind", KINDS)
def test_each_token_of_a_task_fits_inside_its_box(kind):
    """The task explorer paints its tokens as bitmaps (which the layout check does not see):
    each must fit in its box, <EXTRACT> and a Japanese word alike."""
    explorer = TaskInputExplorer(kind, example=3)
    canvas = explorer.canvas
    renderer = canvas.canvas.get_renderer()
    words, boxes = canvas.words.get_texts(), canvas.ax.patches
    assert len(words) == len(boxes) == sum(len(r) for r in explorer.rows())
    for word, box in zip(words, boxes, strict=True):
        ink = sprite(word, "black", canvas.words.fontproperties, canvas.figure.dpi).shape[1]
        assert ink + 2 <= box.get_window_extent(renderer).width, word


def test_the_task_explorer_redraws_for_another_kind_and_example():
    explorer = TaskInputExplorer("classification")
    assert "1 sequence of" in explorer.readout.value
    assert_redraws(explorer, "kind", "similarity")
    assert explorer.readout.value.startswith("2 sequences")
    assert_redraws(explorer, "example", 3)
    with pytest.raises(ValueError, match="kind must be one of"):
        TaskInputExplorer("translation")


def test_the_curves_explorer_reads_the_stored_runs():
    explorer = FineTuningCurvesExplorer(task="grammaticality")
    explorer.n_labelled.value = 1024
    stored = [r["accuracy"] for r in load_curves()["runs"]
              if (r["task"], r["start"], r["lam"], r["n_labelled"])
              == ("grammaticality", "pre-trained", 0.5, 1024)]  # fmt: skip
    assert f"{np.mean(stored):.3f}" in explorer.readout.value
    assert_redraws(explorer, "lam", 0.0)
    assert_redraws(explorer, "task", "entailment")
    assert_redraws(explorer, "n_labelled", 16)
    with pytest.raises(ValueError, match="task must be one of"):
        FineTuningCurvesExplorer(task="sentiment")


def test_the_curves_explorer_offers_only_the_measured_lambdas():
    explorer = FineTuningCurvesExplorer(task="grammaticality")
    explorer.lam.value = 1.0
    explorer.task.value = "multiple choice"  # measured with λ = 0.5 and 0 only
    assert [v for _, v in explorer.lam.options] == [0.0, 0.5] and explorer.lam.value == 0.5
    assert "no stored runs" not in explorer.readout.value
    explorer.task.value = "entailment"
    assert [v for _, v in explorer.lam.options] == [0.0, 0.5, 1.0]


def test_the_convergence_explorer_reads_the_stored_runs():
    from nbhelpers.experiments.fine_tuning_claims import load_claims

    explorer = ConvergenceExplorer(task="grammaticality")
    explorer.step.value = 60
    runs = [r for r in load_claims()["auxiliary"]["runs"]
            if (r["task"], r["lam"], r["lm_on"], r["n_labelled"])
            == ("grammaticality", 0.0, "all", 1024)]  # fmt: skip
    at_60 = np.mean([dict(r["curve"])[60] for r in runs])
    assert f"{at_60:.3f}" in explorer.readout.value
    assert explorer.readout.value.count("<br>") == 2  # three conditions for grammaticality
    assert_redraws(explorer, "task", "entailment")
    assert explorer.readout.value.count("<br>") == 1  # no label-0 condition there
    assert_redraws(explorer, "n_labelled", 128)
    assert_redraws(explorer, "step", 300)
    with pytest.raises(ValueError, match="task must be one of"):
        ConvergenceExplorer(task="similarity")
