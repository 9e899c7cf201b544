"""The stored course model (nbhelpers/data/, written by scripts/save_course_model.py) that
notebooks 08-10 load, and notebook 10's KV cache figure."""

import re
from pathlib import Path

import nbformat
import pytest
import torch
from matplotlib.figure import Figure

from nbhelpers.corpus import JapaneseGrammar
from nbhelpers.experiments.course_model import (
    COURSE_MODEL_PATH,
    DEEP_MODEL_PATH,
    course_model_details,
    load_course_model,
    load_course_run,
    save_course_model,
)
from nbhelpers.experiments.heldout import evaluate, make_heldout
from nbhelpers.experiments.pretraining import corpus_model_config
from nbhelpers.experiments.sampling import sample_sentences
from nbhelpers.figures.canvas import figure_to_png
from nbhelpers.figures.kv_cache import kv_cache_figure
from nbhelpers.gpt1 import GPT1
from nbhelpers.inference import generate_with_cache, generate_without_cache

NOTEBOOK_08 = Path(__file__).resolve().parent.parent / "notebooks/08_training_gpt1.ipynb"


@pytest.fixture(scope="module")
def grammar():
    return JapaneseGrammar()


@pytest.fixture(scope="module")
def model():
    return load_course_model()


def test_the_file_is_small_and_holds_tensors_and_plain_values_only():
    assert COURSE_MODEL_PATH.is_file()
    assert COURSE_MODEL_PATH.stat().st_size < 1024 * 1024  # the model and 3 checkpoints
    saved = torch.load(COURSE_MODEL_PATH, weights_only=True)  # refuses pickled code
    assert set(saved) == {"config", "state_dict", "details", "history", "checkpoints"}
    assert sorted(saved["checkpoints"]) == [0, 100, 300]  # step 800's weights are the model


def test_the_stored_run_is_what_notebook_08_quotes(model, grammar):
    run = load_course_run()
    history = run.history
    assert history.steps == list(range(40, 801, 40))
    assert sorted(history.checkpoints) == [0, 100, 300, 800]
    assert history.kl[-1] == run.details["heldout_kl"] < 0.01
    assert run.details["cpu_capability"] == "DEFAULT"
    # float64 evaluation of the same weights: the model the notebooks print from
    assert run.model.W_e.weight.dtype == torch.float64
    assert torch.equal(run.model.W_e.weight.float(), model.W_e.weight)
    assert torch.equal(history.checkpoints[800]["W_e.weight"], model.W_e.weight)
    start = GPT1(model.config)
    start.load_state_dict(history.checkpoints[0])
    assert not torch.equal(start.W_e.weight, model.W_e.weight)


def test_its_config_is_what_notebook_08_builds(model, grammar):
    assert model.config == corpus_model_config(grammar)
    assert not model.training and model.device.type == "cpu"


def test_it_is_trained_exactly_close_to_the_grammar(model, grammar):
    heldout = make_heldout(grammar, n=500, seed=2024)  # not the sentences it was measured on
    kl, loss = evaluate(model, heldout)
    assert kl < 0.02, kl  # an untrained model is above 3 nats, a 200-step run near 0.2
    assert loss - heldout.true_loss < 0.03
    untrained = GPT1(model.config)
    assert evaluate(untrained, heldout)[0] > 1.0  # the check can fail
    grammatical = sum(ok for _, ok in sample_sentences(model, grammar, 200, seed=0))
    assert grammatical >= 170


def test_the_recipe_it_records_is_notebook_08s_training_cell(grammar):
    details = course_model_details()
    cells = [c.source for c in nbformat.read(NOTEBOOK_08, as_version=4).cells]
    training = [source for source in cells if "history = train(" in source]
    assert len(training) == 1, "notebook 08 needs exactly one `history = train(...)` cell"
    call = re.search(r"history = train\(([^)]*)\)", training[0])
    arguments = dict(re.findall(r"(\w+)=([\w.\-+]+)", call.group(1)))
    for name in ("steps", "batch_size", "lr", "seed"):
        assert float(arguments[name]) == float(details[name]), name
    assert "checkpoints=[0, 100, 300, 800]" in training[0]
    heldout = re.search(r"make_heldout\(grammar, n=(\d+), seed=(\d+)\)", training[0])
    assert heldout and (int(heldout[1]), int(heldout[2])) == (
        details["heldout_n"],
        details["heldout_seed"],
    )
    assert "seed_everything(0)" in training[0] and details["init_seed"] == 0
    assert details["entropy_rate"] == pytest.approx(grammar.entropy_rate(), rel=1e-12)
    assert details["heldout_kl"] < 0.01


def test_cached_and_recomputed_generation_agree_on_the_trained_model(model, grammar):
    prompts = grammar.sample_ids(32, seed=5)[:, :3]
    slow = generate_without_cache(model, prompts, 17)
    fast = generate_with_cache(model, prompts, 17)
    assert torch.equal(slow, fast)
    assert len({tuple(row) for row in fast.tolist()}) > 5  # many different continuations


def test_save_and_load_round_trip_and_errors(tmp_path, model):
    path = save_course_model(model, path=tmp_path / "m.pt", steps=3, note="test")
    again = load_course_model(path=path)
    assert all(torch.equal(again.state_dict()[k], v) for k, v in model.state_dict().items())
    assert course_model_details(path) == {"steps": 3, "note": "test"}
    with pytest.raises(TypeError, match="steps must be a plain"):
        save_course_model(model, path=tmp_path / "x.pt", steps=torch.tensor(3))
    with pytest.raises(ValueError, match="holds no training run"):
        load_course_run(path=path)
    with pytest.raises(FileNotFoundError, match="save_course_model.py"):
        load_course_model(path=tmp_path / "missing.pt")


def test_kv_cache_figure():
    lengths = [1, 4, 8, 16]
    recompute = {"1 sentence": [2e-4, 2e-4, 2e-4, 2e-4], "256 sentences": [1e-3, 2e-3, 3e-3, 6e-3]}
    cached = {"1 sentence": [2e-4, 2e-4, 2e-4, 2e-4], "256 sentences": [1e-3, 1e-3, 1e-3, 1e-3]}
    figure = kv_cache_figure(lengths, recompute, cached, context=20)
    assert isinstance(figure, Figure) and figure.dpi >= 100
    assert figure_to_png(figure).startswith(b"\x89PNG")
    time_ax, speed_ax = figure.axes
    assert len(time_ax.get_lines()) == 4
    speed_ups = [line.get_ydata().tolist() for line in speed_ax.get_lines()[:2]]
    assert speed_ups[1] == pytest.approx([1.0, 2.0, 3.0, 6.0])
    assert time_ax.get_xlim()[1] == pytest.approx(20.5)
    texts = [t for ax in figure.axes for t in (ax.title, ax.xaxis.label, ax.yaxis.label)]
    texts += [t for ax in figure.axes for t in ax.get_legend().get_texts()]
    assert min(t.get_fontsize() for t in texts) >= 9
    with pytest.raises(ValueError, match="same labels"):
        kv_cache_figure(lengths, recompute, {"1 sentence": cached["1 sentence"]})
    with pytest.raises(ValueError, match="3 values but there are 4 lengths"):
        kv_cache_figure(lengths, {"a": [1e-3] * 3}, {"a": [1e-3] * 4})
    with pytest.raises(ValueError, match="positive times"):
        kv_cache_figure(lengths, {"a": [1e-3, 0, 1e-3, 1e-3]}, {"a": [1e-3] * 4})


def test_the_deep_model_is_the_recipe_with_4_blocks_and_as_close_to_the_grammar(grammar):
    """Notebook 11's layers-transferred curve starts from it (scripts/save_course_model.py
    deep): its file records its own recipe and held-out KL, and a fresh held-out set agrees."""
    deep = load_course_model(path=DEEP_MODEL_PATH)
    assert deep.config == corpus_model_config(grammar, n_layers=4)
    details = course_model_details(DEEP_MODEL_PATH)
    assert (details["steps"], details["lr"], details["cpu_capability"]) == (1600, 2e-3, "DEFAULT")
    assert DEEP_MODEL_PATH.stat().st_size < 1024 * 1024  # the weights only, no checkpoints
    kl, _ = evaluate(deep, make_heldout(grammar, n=500, seed=2024))
    assert kl < 0.02, kl
