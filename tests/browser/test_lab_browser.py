"""The course as a learner uses it: real JupyterLab, real Chromium, run all, read the page,
move a slider.

One JupyterLab server (127.0.0.1, a token set here; browser/lab.py) and one page in headless
Chromium open every notebook in turn and run all its cells (a notebook with no explorer,
08, is read as stored: nbval has checked its outputs against a fresh run); no cell may show
an error, and the rendered page must show nothing a learner should not see
(lab.PAGE_PROBLEMS). A
notebook's first kernel-drawn explorer has its slider moved with the keyboard (an explorer
without a slider has its first dropdown stepped instead): its image must change, and the
slider-to-image latency is printed; screenshots go to artifacts/browser/. A browser-drawn
BrowserHeatmap has its temperature slider pressed too, and the time from each key to the
redrawn canvas is printed. One notebook is also run in Notebook 7, the other front end the
README names, with both kinds of explorer moved.

The browser is found as `find_browser.py` says. With none, the tests are skipped with one
line that says what was looked for and how to install one; under CI=true they fail.
"""

from __future__ import annotations

import statistics
import time

import pytest

from browser.lab import (
    ALL_EXECUTED,
    ARTIFACTS,
    CLOSE_NOTEBOOK,
    ERRORS,
    KERNEL_READY,
    open_and_run_all,
    open_notebook,
    page_problems,
)
from notebook_tools import NOTEBOOKS, ROOT, has_widget

# Notebook 7: one notebook with a kernel-drawn explorer and a BrowserHeatmap.
NOTEBOOK7_NOTEBOOK = ROOT / "notebooks" / "00_tour.ipynb"
# The Japanese edition too: its first explorer must speak Japanese in the page.
JAPANESE_NOTEBOOK = ROOT / "notebooks" / "ja" / "02_softmax.ipynb"
JAPANESE_WORD = "割る"  # from the checkbox "√d_k で割る"
SLIDER_PRESSES = 9  # enough moves for a steady median on a busy 2-core machine
HEATMAP_PRESSES = 20

pytestmark = pytest.mark.slow

WATCH_FIRST_EXPLORER = """() => {
  const areas = [...document.querySelectorAll('.jp-OutputArea-output')].filter(
    a => a.querySelector('img.widget-image'));
  const withSlider = areas.filter(a => a.querySelector('.widget-slider .noUi-handle'));
  const withSelect = areas.filter(a => a.querySelector('.widget-dropdown select'));
  const area = withSlider[0] || withSelect[0];
  if (!area) return false;
  area.setAttribute('data-test-explorer', '1');
  const control = area.querySelector('.widget-slider .noUi-handle')
    || area.querySelector('.widget-dropdown select');
  control.setAttribute('data-test-control', '1');
  const img = area.querySelector('img.widget-image');
  window.__changes = [];
  new MutationObserver(() => window.__changes.push(performance.now()))
    .observe(img, {attributes: true, attributeFilter: ['src']});
  // From the browser's own event: the key, or the dropdown's change (Playwright's call that
  // picks an option arrives some milliseconds after the script that asks for it).
  control.addEventListener('keydown', () => { window.__keyAt = performance.now(); }, true);
  control.addEventListener('change', () => { window.__keyAt = performance.now(); }, true);
  return true;
}"""
NEXT_KEY = """() => {
  const c = document.querySelector('[data-test-control]');
  const now = Number(c.getAttribute('aria-valuenow'));
  return now < Number(c.getAttribute('aria-valuemax')) ? 'ArrowRight' : 'ArrowLeft';
}"""
# A dropdown's next option (stepping back at the end), for explorers without a slider.
NEXT_OPTION = """() => {
  const c = document.querySelector('[data-test-control]');
  return c.selectedIndex < c.options.length - 1 ? c.selectedIndex + 1 : c.selectedIndex - 1;
}"""


def move_kernel_slider(page, stem: str, japanese: bool = False) -> list[float]:
    """Move the first kernel-drawn explorer's slider (or step its dropdown) a few times; its
    image must change and no cell may error. Returns the key-to-new-image times."""
    assert page.wait_for_function(WATCH_FIRST_EXPLORER, timeout=30_000)
    explorer = page.locator("[data-test-explorer='1']")
    explorer.scroll_into_view_if_needed()
    image = explorer.locator("img.widget-image").first
    before = image.screenshot()
    explorer.screenshot(path=str(ARTIFACTS / f"{stem}-before.png"))
    if japanese:
        from playwright.sync_api import expect

        # retried: the page may still be laying the output out after scrolling to it
        expect(explorer).to_contain_text(JAPANESE_WORD, timeout=10_000)
    control = explorer.locator("[data-test-control]").first
    is_slider = control.evaluate("c => c.tagName !== 'SELECT'")
    control.focus()
    latencies = []
    for _ in range(SLIDER_PRESSES):
        seen = page.evaluate("() => window.__changes.length")
        if is_slider:
            control.press(page.evaluate(NEXT_KEY))
        else:
            control.select_option(index=page.evaluate(NEXT_OPTION))
        page.wait_for_function(f"() => window.__changes.length > {seen}", timeout=20_000)
        latencies.append(page.evaluate("() => window.__changes.at(-1) - window.__keyAt"))
        # The next key waits for the kernel to finish this one (and every other) redraw.
        page.wait_for_function(ALL_EXECUTED, timeout=30_000, polling=50)
    after = image.screenshot()
    explorer.screenshot(path=str(ARTIFACTS / f"{stem}-after.png"))
    page.screenshot(path=str(ARTIFACTS / f"{stem}-page.png"))
    assert after != before, f"{stem}: the heatmap did not change after moving a slider"
    assert page.evaluate(ERRORS) == [], f"{stem}: a cell shows an error after sliding"
    return latencies


def press_heatmap_slider(page, stem: str) -> list[float]:
    """Press the first BrowserHeatmap's temperature slider; each press must redraw the
    canvas once, in the page. Returns the key-to-redraw times the widget measured."""
    heatmap = page.locator(".nbh-heatmap").first
    heatmap.wait_for(timeout=30_000)
    heatmap.scroll_into_view_if_needed()
    widget = heatmap.locator("xpath=..")
    canvas = heatmap.locator("canvas")
    before = canvas.screenshot()
    slider = heatmap.locator("input[type=range]").first
    slider.focus()
    for _ in range(HEATMAP_PRESSES):
        slider.press("ArrowRight")
    timings = widget.evaluate("el => el.nbhTimings")
    assert len(timings) == HEATMAP_PRESSES, f"{stem}: each key press redraws once"
    assert canvas.screenshot() != before, f"{stem}: the heatmap did not change"
    heatmap.screenshot(path=str(ARTIFACTS / f"{stem}-browser-heatmap.png"))
    return timings


def stem_of(relative: str) -> str:
    return relative.removeprefix("notebooks/").removesuffix(".ipynb").replace("/", "-")


def kernel_result(relative: str, latencies: list[float], started: float, **more) -> dict:
    return {
        "notebook": relative,
        **more,
        "slider_to_image_ms_median": round(statistics.median(latencies), 1),
        "slider_to_image_ms": [round(x, 1) for x in latencies],
        "seconds": round(time.monotonic() - started, 1),
    }


def heatmap_result(relative: str, timings: list[float], explorer: str) -> dict:
    return {
        "notebook": relative,
        "explorer": explorer,
        "key_to_redraw_ms_median": round(statistics.median(timings), 2),
        "key_to_redraw_ms_worst": round(max(timings), 2),
        "first_key_ms": round(timings[0], 2),
    }


def print_heatmap(result: dict) -> None:
    print(
        f"\n{result['explorer']}: key -> redraw median {result['key_to_redraw_ms_median']} "
        f"ms, worst {result['key_to_redraw_ms_worst']} ms, first {result['first_key_ms']} ms "
        f"over {HEATMAP_PRESSES} presses, in the page"
    )


@pytest.mark.parametrize(
    "path",
    [*NOTEBOOKS, JAPANESE_NOTEBOOK],
    ids=lambda p: f"{p.parent.name}-{p.stem}" if p.parent.name == "ja" else p.stem,
)
def test_run_all_read_the_page_and_move_its_explorers(path, page, record_latency):
    """Each notebook, once: run all, read the rendered page for what no learner should see
    (page_problems), then move its first kernel-drawn explorer's slider (the image must
    change) and press its BrowserHeatmap's slider (redrawn in the page, no kernel), each
    timed. The Japanese notebook's explorer must speak Japanese."""
    started = time.monotonic()
    relative = path.relative_to(ROOT).as_posix()
    latencies = timings = None
    live = has_widget(path, drawn_in_browser=False) or has_widget(path, drawn_in_browser=True)
    try:
        if live:
            open_and_run_all(page, relative)
        else:
            # Nothing to move (notebook 08): the page of its stored outputs, which nbval has
            # checked against a fresh run, is what Run All would show; its 800 training steps
            # are not run a third time.
            open_notebook(page, relative)
        problems = page_problems(page, relative)
        assert not problems, f"{relative}: the page shows\n" + "\n".join(problems)
        if has_widget(path, drawn_in_browser=False):
            latencies = move_kernel_slider(page, stem_of(relative), path == JAPANESE_NOTEBOOK)
        if has_widget(path, drawn_in_browser=True):
            timings = press_heatmap_slider(page, stem_of(relative))
    finally:
        page.evaluate(CLOSE_NOTEBOOK)
    if latencies:
        result = kernel_result(relative, latencies, started)
        record_latency(result)
        print(
            f"\n{relative}: slider -> new image median {result['slider_to_image_ms_median']} "
            f"ms over {SLIDER_PRESSES} moves; notebook run + interaction {result['seconds']} s"
        )
    if timings:
        result = heatmap_result(
            relative, timings, f"BrowserHeatmap, notebook {path.name[:2]} (JupyterLab)"
        )
        record_latency(result)
        print_heatmap(result)


def test_notebook_7_runs_both_kinds_of_explorer(browser, notebook7, record_latency):
    """Notebook 7 (the classic-looking front end, built on JupyterLab's parts): the tour opened
    at its own URL, run all, its BrowserHeatmap pressed (and a kernel-drawn slider moved, where
    the notebook has one)."""
    base, token = notebook7.base, notebook7.token
    started = time.monotonic()
    relative = NOTEBOOK7_NOTEBOOK.relative_to(ROOT).as_posix()
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    try:
        page.goto(f"{base}/notebooks/{relative}?token={token}")
        page.wait_for_function("() => !!window.jupyterapp", timeout=90_000)
        page.evaluate("async () => { await window.jupyterapp.restored; }")
        page.wait_for_function(KERNEL_READY, arg=relative, timeout=90_000)
        page.evaluate("() => window.jupyterapp.commands.execute('notebook:clear-all-cell-outputs')")
        page.evaluate("() => window.jupyterapp.commands.execute('notebook:run-all-cells')")
        page.wait_for_function(ALL_EXECUTED, timeout=300_000, polling=200)
        assert page.evaluate(ERRORS) == [], f"{relative} in Notebook 7: a cell shows an error"
        stem = "notebook7-" + stem_of(relative)
        latencies = []
        if has_widget(NOTEBOOK7_NOTEBOOK, drawn_in_browser=False):
            latencies = move_kernel_slider(page, stem)
        timings = press_heatmap_slider(page, stem)
    finally:
        page.evaluate("async () => { await window.jupyterapp.shell.currentWidget"
                      "?.sessionContext.shutdown(); }")  # fmt: skip
        page.close()
    if latencies:
        kernel = kernel_result(relative, latencies, started, front_end="Notebook 7")
        record_latency(kernel)
        print(
            f"\n{relative} in Notebook 7: slider -> new image median "
            f"{kernel['slider_to_image_ms_median']} ms over {SLIDER_PRESSES} moves"
        )
    heatmap = heatmap_result(relative, timings, "BrowserHeatmap, notebook 00 (Notebook 7)")
    record_latency(heatmap)
    print_heatmap(heatmap)
