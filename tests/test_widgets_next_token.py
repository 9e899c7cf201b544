import ipywidgets as widgets
import pytest
import torch
from matplotlib.figure import Figure

from nbhelpers import GPT1
from nbhelpers.corpus import JapaneseGrammar
from nbhelpers.experiments.pretraining import corpus_model_config
from nbhelpers.figures.next_token import next_token_figure, top_tokens
from nbhelpers.inference import next_token_distribution
from nbhelpers.statistics import kl_divergence
from nbhelpers.widgets import NextTokenExplorer


@pytest.fixture(scope="module")
def grammar():
    return JapaneseGrammar()


@pytest.fixture(scope="module")
def model(grammar):
    torch.manual_seed(0)
    model = GPT1(corpus_model_config(grammar, d_model=16, n_layers=1, n_heads=2))
    with torch.no_grad():
        model.W_e.weight.mul_(20)  # an untrained model with visibly uneven probabilities
    return model.eval()


def test_explorer_draws_png_and_compares_with_the_truth(model, grammar):
    explorer = NextTokenExplorer(model, grammar)
    assert isinstance(explorer.image, widgets.Image)
    assert isinstance(explorer.image.value, memoryview)
    assert explorer.png().startswith(b"\x89PNG")
    model_probs, true_probs = explorer.distributions()
    assert torch.equal(true_probs, grammar.true_next_token_distribution("犬 が 河岸 を"))
    expected = next_token_distribution(model, grammar.tokenizer.encode("犬 が 河岸 を"))
    torch.testing.assert_close(model_probs, expected)
    assert "KL(true ‖ model)" in explorer.readout.value


def test_sliders_redraw_image_and_readout(model, grammar):
    explorer = NextTokenExplorer(model, grammar)
    before_png, before_text = explorer.png(), explorer.readout.value
    explorer.temperature.value = 0.3
    assert explorer.png() != before_png
    assert explorer.readout.value != before_text
    before_png = explorer.png()
    explorer.top_k.value = 2
    assert explorer.png() != before_png
    model_probs, _ = explorer.distributions()
    assert int((model_probs > 0).sum()) == 2
    assert "top-2" in explorer.readout.value or "∞" in explorer.readout.value


def test_typing_and_picking_prefixes(model, grammar):
    explorer = NextTokenExplorer(model, grammar)
    before = explorer.png()
    explorer.prefix.value = "鳥が空を"
    assert explorer.png() != before
    _, true_probs = explorer.distributions()
    assert true_probs[grammar.tokenizer.ids["飛ぶ"]] > 0.5
    explorer.examples.value = "魚 が 川 を"
    assert explorer.prefix.value == "魚 が 川 を"


def test_bad_prefixes_are_explained_in_the_readout(model, grammar):
    explorer = NextTokenExplorer(model, grammar)
    explorer.prefix.value = "ライオン が"
    assert "unknown token" in explorer.readout.value and "ライオン" in explorer.readout.value
    explorer.prefix.value = "猫 が 公園 を 泳ぐ"
    assert "cannot produce" in explorer.readout.value
    explorer.prefix.value = " ".join(["犬"] * 25)
    assert "n_ctx" in explorer.readout.value


def test_generate_extends_the_sentence_until_eos(model, grammar):
    explorer = NextTokenExplorer(model, grammar, prefix="犬 が", seed=1)
    explorer.generate_button.click()
    tokens = explorer.prefix.value.split()
    assert len(tokens) == 3 and tokens[:2] == ["犬", "が"]
    assert "generated" in explorer.readout.value
    explorer.prefix.value = "犬 が 河岸 を 歩く <EOS>"
    assert explorer.generate_button.disabled
    assert "complete" in explorer.readout.value
    explorer.generate()
    assert explorer.prefix.value == "犬 が 河岸 を 歩く <EOS>"
    explorer.prefix.value = "犬"
    assert not explorer.generate_button.disabled


def test_generation_with_top_1_follows_the_argmax(model, grammar):
    explorer = NextTokenExplorer(model, grammar, prefix="")
    explorer.top_k.value = 1
    probs, _ = explorer.distributions()
    explorer.generate()
    assert explorer.prefix.value == grammar.tokenizer.tokens[int(probs.argmax())]


def test_helpers():
    assert top_tokens(torch.tensor([0.1, 0.5, 0.4]), torch.tensor([0.7, 0.2, 0.1]), 2) == [0, 1]
    assert top_tokens(torch.tensor([0.5, 0.5, 0.0]), None, 5) == [0, 1, 2]
    assert kl_divergence(torch.tensor([0.5, 0.5]), torch.tensor([0.5, 0.5])) == 0.0
    assert kl_divergence(torch.tensor([0.5, 0.5]), torch.tensor([1.0, 0.0])) == float("inf")
    figure = next_token_figure(torch.tensor([0.2, 0.8]), None, ["a", "b"])
    assert isinstance(figure, Figure)
    with pytest.raises(ValueError, match="model_probs has 2 values but there are 3 tokens"):
        next_token_figure(torch.tensor([0.2, 0.8]), None, ["a", "b", "c"])


def test_constructor_checks_and_stable_repr(model, grammar):
    with pytest.raises(TypeError, match="model must be a GPT1"):
        NextTokenExplorer(torch.nn.Linear(2, 2), grammar)
    with pytest.raises(TypeError, match="grammar must be a JapaneseGrammar"):
        NextTokenExplorer(model, None)
    explorer = NextTokenExplorer(model, grammar)
    explorer.temperature.value = 2.0
    assert repr(explorer) == "NextTokenExplorer(41 tokens)"
