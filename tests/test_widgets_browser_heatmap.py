"""BrowserHeatmap without a browser: the weights it reports against F.softmax, the errors it
gives, the PNG beside the live view, the exported page and the words in Japanese. What the
browser draws and how fast is tested in tests/browser/test_browser_heatmap.py."""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F

from nbhelpers.example import running_example
from nbhelpers.support import language
from nbhelpers.widgets.browser_heatmap import SCRIPT, BrowserHeatmap


@pytest.fixture
def example():
    return running_example()


@pytest.mark.parametrize(
    ("temperature", "scaled", "causal"), [(1.0, True, True), (0.7, False, False)]
)
def test_its_weights_are_softmax_of_the_scaled_masked_scores(example, temperature, scaled, causal):
    widget = BrowserHeatmap(example.Q, example.K, example.tokens, temperature=temperature,
                            scaled=scaled, causal=causal)  # fmt: skip
    scores = example.Q.double() @ example.K.double().T
    scores = scores / (math.sqrt(example.Q.shape[-1]) if scaled else 1) / temperature
    if causal:
        scores = scores.masked_fill(torch.ones(5, 5, dtype=torch.bool).triu(1), float("-inf"))
    torch.testing.assert_close(widget.weights(), F.softmax(scores, dim=-1))


def test_heads_are_sent_as_one_matrix_each(example):
    Q = torch.stack([example.Q, 2 * example.Q])
    K = torch.stack([example.K, example.K])
    widget = BrowserHeatmap(Q, K, example.tokens)
    assert len(widget.raw) == 2
    widget.head = 1
    torch.testing.assert_close(
        widget.weights(), F.softmax(2 * (example.Q @ example.K.T).double() / math.sqrt(2), dim=-1)
    )


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (lambda e: (e.Q, e.K[:, :1], e.tokens), "Q and K must have the same shape"),
        (lambda e: (e.Q, e.K, e.tokens[:4]), "tokens must name the 5 rows of Q"),
        (lambda e: (e.Q, e.K, e.tokens, e.V[:3]), r"V must be \(n, d_v\) = \(5, ...\)"),
        (lambda e: (e.Q.int(), e.K, e.tokens), "Q must be a floating-point tensor"),
    ],
)
def test_bad_input_names_the_argument(example, arguments, message):
    with pytest.raises((ValueError, TypeError), match=message):
        BrowserHeatmap(*arguments(example))


def test_a_temperature_outside_the_slider_is_refused(example):
    with pytest.raises(ValueError, match=r"temperature must be a number in \[0.1, 5\], got 0"):
        BrowserHeatmap(example.Q, example.K, example.tokens, temperature=0)


def test_beside_the_live_view_a_png_of_the_same_weights(example):
    widget = BrowserHeatmap(example.Q, example.K, example.tokens, causal=True)
    bundle = widget._repr_mimebundle_()
    data = bundle[0] if isinstance(bundle, tuple) else bundle
    assert "application/vnd.jupyter.widget-view+json" in data
    assert data["image/png"].startswith(b"\x89PNG")
    widget.causal = False
    assert widget.png() != data["image/png"]  # the PNG follows the state


def test_the_exported_page_holds_its_script_and_data_and_fetches_nothing(example, tmp_path):
    tokens = ["犬", "が", "</script>", "を", "歩く"]  # a token must not end the script early
    widget = BrowserHeatmap(example.Q, example.K, tokens)
    path = tmp_path / "page.html"
    page = widget.to_html(path)
    assert path.read_text(encoding="utf-8") == page
    assert "http://" not in page and "https://" not in page
    assert page.count("</script>") == 1  # only the page's own
    assert "softmaxRows" in page  # the module itself, inline
    assert SCRIPT.read_text(encoding="utf-8") == widget._esm


def test_its_words_follow_the_language(example):
    language.set_language("ja")
    try:
        widget = BrowserHeatmap(example.Q, example.K, example.tokens)
    finally:
        language.set_language(None)
    assert widget.texts["temperature"] == "温度"
    assert widget.texts["causal"] == "因果マスク"
    english = BrowserHeatmap(example.Q, example.K, example.tokens)
    assert english.texts["temperature"] == "temperature"
