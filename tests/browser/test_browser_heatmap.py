"""BrowserHeatmap in real Chromium, from the file its `to_html` writes, with every network
request blocked: the page must work offline, its formulas must give nbhelpers' weights on
the same inputs, a key press must redraw it (timed, and printed), and the pointer must show
a cell's formula with that cell's numbers.

The latency printed is from the key's (or the pointer's) event to the end of the redraw,
measured in the page; it is reported, not asserted (machines differ 2-4x), and appended to
artifacts/browser/latency.jsonl beside the kernel-drawn explorers' figures.
"""

from __future__ import annotations

import statistics

import pytest
import torch

from nbhelpers.example import running_example
from nbhelpers.widgets.browser_heatmap import BrowserHeatmap
from notebook_tools import ROOT

pytestmark = pytest.mark.slow
ARTIFACTS = ROOT / "artifacts" / "browser"
PRESSES = 20


@pytest.fixture
def offline_page(browser, tmp_path):
    example = running_example()
    widget = BrowserHeatmap(example.Q, example.K, example.tokens, example.V, causal=True)
    path = tmp_path / "heatmap.html"
    widget.to_html(path)
    page = browser.new_page(viewport={"width": 900, "height": 900})
    blocked = []

    def only_the_file(route):
        if route.request.url.startswith(("file:", "blob:", "data:")):
            route.continue_()
        else:
            blocked.append(route.request.url)
            route.abort()

    page.route("**/*", only_the_file)
    page.goto(path.as_uri())
    page.wait_for_function("() => !!window.nbhelpersHeatmap && !!document.querySelector('canvas')")
    yield page, widget, path, blocked
    page.close()


def test_the_page_is_one_file_that_asks_the_network_for_nothing(offline_page, record_latency):
    page, _, path, blocked = offline_page
    assert blocked == [], f"the exported page fetched {blocked}"
    size = path.stat().st_size
    print(f"\nexported heatmap: {size:,} bytes, one file, opened offline")
    record_latency({"explorer": "BrowserHeatmap (exported page)", "bytes": size})
    assert "http://" not in path.read_text() and "https://" not in path.read_text()


@pytest.mark.parametrize(
    ("temperature", "scaled", "causal"),
    [(1.0, True, False), (0.7, True, True), (2.0, False, True), (0.1, False, False)],
)
def test_the_browsers_formulas_give_nbhelpers_weights(offline_page, temperature, scaled, causal):
    page, widget, _, _ = offline_page
    widget.temperature, widget.scaled, widget.causal = temperature, scaled, causal
    expected = widget.weights()  # nbhelpers: softmax(raw / √d_k / T + M)
    got = page.evaluate(
        """([raw, options]) => window.nbhelpersHeatmap.steps(raw, options).weights""",
        [
            widget.raw[0],
            {"dK": widget.d_k, "scaled": scaled, "temperature": temperature, "causal": causal},
        ],
    )
    error = (torch.tensor(got, dtype=torch.float64) - expected).abs().max().item()
    print(f"\nJS steps() vs nbhelpers softmax, T={temperature}, scaled={scaled}, "
          f"causal={causal}: max |error| = {error:.1e}")  # fmt: skip
    assert error < 1e-12


def test_a_key_press_redraws_in_the_page_and_the_pointer_shows_the_formula(
    offline_page, record_latency
):
    page, widget, _, _ = offline_page
    canvas = page.locator("canvas")
    before = canvas.screenshot()
    slider = page.get_by_label(widget.texts["temperature"], exact=True)
    slider.focus()
    redraws = int(page.evaluate("() => document.getElementById('widget').dataset.redraws"))
    for _ in range(PRESSES):
        slider.press("ArrowRight")
    timings = page.evaluate("() => document.getElementById('widget').nbhTimings")
    after_redraws = int(page.evaluate("() => document.getElementById('widget').dataset.redraws"))
    assert after_redraws == redraws + PRESSES, "each key press redraws once"
    assert canvas.screenshot() != before, "the heatmap did not change"

    # point at row 3 (を), key 1 (が): its formula, with its own numbers
    box = canvas.bounding_box()
    n, cell, margin = len(widget.tokens), 56, 64
    cell = max(28, min(56, 480 // n))
    page.mouse.move(box["x"] + margin + 1.5 * cell, box["y"] + margin + 3.5 * cell)
    tip = page.locator(".nbh-tip").inner_text()
    state = page.evaluate(
        """() => ({T: Number(document.querySelector('input[type=range]').value)})"""
    )
    widget.temperature = state["T"]
    a = widget.weights()[3, 1].item()
    assert "a₃₁" in tip and f"{a:.3f}" in tip, tip
    assert "s₃₁ = q₃·k₁ / √d_k" in tip, tip
    page.mouse.move(box["x"] + margin + 4.5 * cell, box["y"] + margin + 1.5 * cell)
    assert "−∞" in page.locator(".nbh-tip").inner_text()  # key 4 is in query 1's future

    # pin row 4 (歩く): the five steps, then o_i
    page.mouse.click(box["x"] + margin + 0.5 * cell, box["y"] + margin + 4.5 * cell)
    rows = page.locator(".nbh-steps tr").all_inner_texts()
    assert len(rows) == 1 + 5 + 1, rows
    hover = page.evaluate("() => document.getElementById('widget').nbhTimings")[len(timings) :]

    keys = sorted(timings)
    result = {
        "explorer": "BrowserHeatmap (exported page, offline)",
        "key_to_redraw_ms_median": round(statistics.median(keys), 2),
        "key_to_redraw_ms_worst": round(keys[-1], 2),
        "first_key_ms": round(timings[0], 2),
        "pointer_to_formula_ms_median": round(statistics.median(hover), 2) if hover else None,
    }
    record_latency(result)
    print(f"\nBrowserHeatmap: key -> redraw median {result['key_to_redraw_ms_median']} ms, "
          f"worst {result['key_to_redraw_ms_worst']} ms, first {result['first_key_ms']} ms "
          f"over {PRESSES} presses; pointer -> formula median "
          f"{result['pointer_to_formula_ms_median']} ms")  # fmt: skip


def test_the_controls_follow_a_change_made_from_python(offline_page):
    """The kernel sets a trait (widget.temperature = 2.5): the picture redraws and the
    slider, the checkboxes and the readout move with it. In the exported page the model
    stand-in plays the kernel's part."""
    page, widget, _, _ = offline_page
    temperature = page.get_by_label(widget.texts["temperature"], exact=True)
    boxes = page.locator(".nbh-controls input[type=checkbox]")
    assert boxes.nth(0).is_checked() and boxes.nth(1).is_checked()  # scaled, causal
    page.evaluate(
        """() => { const m = window.nbhelpersModel;
                   m.set('temperature', 2.5); m.set('scaled', false); m.set('causal', false); }"""
    )
    assert float(temperature.input_value()) == 2.5
    assert not boxes.nth(0).is_checked() and not boxes.nth(1).is_checked()
    assert "2.50" in page.locator(".nbh-controls").inner_text()
