"""The course as a learner uses it: real JupyterLab, real Chromium, run all, move a slider.

One JupyterLab server (127.0.0.1, a token set here) and one page in headless Chromium open
each notebook that has a kernel-drawn explorer in turn, run all its cells and move a slider
with the keyboard. (An explorer without a slider has its first dropdown stepped instead.)
The test asserts that the widget's image changed and that no cell shows an error, saves
screenshots under artifacts/browser/, and prints the slider-to-image latency. Each notebook
with a browser-drawn BrowserHeatmap has its temperature slider pressed too, and the time
from each key to the redrawn canvas is printed. One notebook is also run in Notebook 7, the
other front end the README names, with both kinds of explorer moved.

The browser is found as `find_browser.py` says. With none, the tests are skipped with one
line that says what was looked for and how to install one; under CI=true they fail.
"""

from __future__ import annotations

import os
import secrets
import shutil
import socket
import statistics
import subprocess
import sys
import time
import urllib.request
from contextlib import contextmanager
from pathlib import Path

import pytest

from notebook_tools import NOTEBOOKS, ROOT, has_widget

ARTIFACTS = ROOT / "artifacts" / "browser"
KERNEL_EXPLORER_NOTEBOOKS = [p for p in NOTEBOOKS if has_widget(p, drawn_in_browser=False)]
HEATMAP_NOTEBOOKS = [p for p in NOTEBOOKS if has_widget(p, drawn_in_browser=True)]
# Notebook 7: one notebook with a kernel-drawn explorer and a BrowserHeatmap.
NOTEBOOK7_NOTEBOOK = ROOT / "notebooks" / "04_masked_self_attention.ipynb"
# The Japanese edition too: its first explorer must speak Japanese in the page.
JAPANESE_NOTEBOOK = ROOT / "notebooks" / "ja" / "02_softmax.ipynb"
JAPANESE_WORD = "割る"  # from the checkbox "√d_k で割る"
SLIDER_PRESSES = 9  # enough moves for a steady median on a busy 2-core machine
HEATMAP_PRESSES = 20

pytestmark = pytest.mark.slow

# JavaScript run in the page. jupyterapp is exposed by --LabApp.expose_app_in_browser.
KERNEL_READY = """(path) => {
  const panel = window.jupyterapp && window.jupyterapp.shell.currentWidget;
  const kernel = panel && panel.context && panel.context.path === path && panel.sessionContext
    && panel.sessionContext.session && panel.sessionContext.session.kernel;
  return !!kernel && kernel.connectionStatus === 'connected' && kernel.status === 'idle'
    && !!panel.content && panel.content.widgets.length > 0;
}"""
# Shut the notebook's kernel down and close it without the "save changes?" dialog (the
# server's copy of the notebook is a throwaway one).
CLOSE_NOTEBOOK = """async () => {
  const panel = window.jupyterapp.shell.currentWidget;
  await panel.sessionContext.shutdown();
  panel.context.model.dirty = false;
  panel.dispose();
}"""
ALL_EXECUTED = """() => {
  const panel = window.jupyterapp.shell.currentWidget;
  const kernel = panel.sessionContext.session.kernel;
  const cells = panel.content.widgets.filter(c => c.model.type === 'code');
  return kernel.status === 'idle' && cells.every(c => c.model.executionCount !== null);
}"""
ERRORS = """() => {
  const panel = window.jupyterapp.shell.currentWidget;
  return panel.content.widgets.filter(c => c.model.type === 'code').flatMap(c =>
    c.model.outputs.toJSON().filter(o => o.output_type === 'error')
      .map(o => o.ename + ': ' + o.evalue));
}"""
# Marks the first output that holds a widget image and a control (a slider if there is one,
# else a dropdown), and watches the image for new PNGs.
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
# The slider key that moves one step without running into the slider's end.
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


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# The server app each front end runs as, and its class for the app's own options.
FRONT_ENDS = {"lab": "LabApp", "notebook": "JupyterNotebookApp"}


@contextmanager
def jupyter_server(front_end: str, root: Path):
    """`jupyter lab` or `jupyter notebook` on 127.0.0.1 serving a copy of the notebooks
    (autosave must never write browser-run outputs into the repository); yields its base URL
    and token."""
    shutil.copytree(ROOT / "notebooks", root / "notebooks")
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    port, token, app = free_port(), secrets.token_hex(16), FRONT_ENDS[front_end]
    command = [
        str(Path(sys.executable).with_name("jupyter")),
        front_end,
        "--no-browser",
        "--ServerApp.ip=127.0.0.1",
        f"--ServerApp.port={port}",
        "--ServerApp.port_retries=0",
        f"--IdentityProvider.token={token}",
        f"--ServerApp.root_dir={root}",
        f"--{app}.expose_app_in_browser=True",  # window.jupyterapp, for the scripts above
        f"--{app}.workspaces_dir={root / 'ws'}",
        f"--{app}.user_settings_dir={root / 'settings'}",
    ]
    if os.geteuid() == 0:
        command.append("--allow-root")
    log_path = ARTIFACTS / f"{front_end}.log"
    with open(log_path, "w") as log:
        server = subprocess.Popen(
            command,
            stdout=log,
            stderr=subprocess.STDOUT,
            env={**os.environ, "NBHELPERS_DEVICE": "cpu"},
        )
        try:
            base = f"http://127.0.0.1:{port}"
            deadline = time.monotonic() + 60
            while True:
                try:
                    with urllib.request.urlopen(f"{base}/api/status?token={token}", timeout=2):
                        break
                except OSError:
                    if server.poll() is not None or time.monotonic() > deadline:
                        pytest.fail(f"jupyter {front_end} did not start; see {log_path}")
                    time.sleep(0.3)
            yield base, token
        finally:
            server.terminate()
            try:
                server.wait(timeout=20)
            except subprocess.TimeoutExpired:
                server.kill()


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    with jupyter_server("lab", tmp_path_factory.mktemp("lab")) as served:
        yield served


@pytest.fixture(scope="module")
def page(browser, lab):
    """One JupyterLab page for every notebook: the app loads once, each test opens its own
    notebook in it and closes it (and its kernel) at the end."""
    base, token = lab
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    page.goto(f"{base}/lab/workspaces/test?token={token}&reset")
    page.wait_for_function("() => !!window.jupyterapp", timeout=90_000)
    page.evaluate("async () => { await window.jupyterapp.restored; }")
    yield page
    page.close()


def open_and_run_all(page, relative: str) -> None:
    """Open the notebook at `relative`, clear it and run all its cells; no cell may error."""
    page.evaluate(
        "async (path) => { await window.jupyterapp.commands.execute('docmanager:open', {path}); }",
        relative,
    )
    # The toolbar says "Idle" before the kernel's websocket is up, and a run-all sent then is
    # dropped: wait for the session's kernel itself.
    page.wait_for_function(KERNEL_READY, arg=relative, timeout=90_000)
    page.evaluate("() => window.jupyterapp.commands.execute('notebook:clear-all-cell-outputs')")
    page.evaluate("() => window.jupyterapp.commands.execute('notebook:run-all-cells')")
    page.wait_for_function(ALL_EXECUTED, timeout=300_000, polling=200)
    assert page.evaluate(ERRORS) == [], f"{relative}: a cell shows an error"


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
    [*KERNEL_EXPLORER_NOTEBOOKS, JAPANESE_NOTEBOOK],
    ids=lambda p: f"{p.parent.name}-{p.stem}" if p.parent.name == "ja" else p.stem,
)
def test_run_all_and_move_a_slider(path, page, record_latency):
    started = time.monotonic()
    relative = path.relative_to(ROOT).as_posix()
    try:
        open_and_run_all(page, relative)
        latencies = move_kernel_slider(page, stem_of(relative), path == JAPANESE_NOTEBOOK)
    finally:
        page.evaluate(CLOSE_NOTEBOOK)
    result = kernel_result(relative, latencies, started)
    record_latency(result)
    print(
        f"\n{relative}: slider -> new image median {result['slider_to_image_ms_median']} ms "
        f"over {SLIDER_PRESSES} moves; notebook run + interaction {result['seconds']} s"
    )


@pytest.mark.parametrize("path", HEATMAP_NOTEBOOKS, ids=lambda p: p.stem)
def test_the_browser_heatmap_redraws_in_the_page(path, page, record_latency):
    """Each BrowserHeatmap notebook, in JupyterLab: its temperature slider redraws the
    heatmap in the page, no kernel involved; the key-to-redraw times are printed beside the
    kernel-drawn explorers' (the same run, the same machine)."""
    relative = path.relative_to(ROOT).as_posix()
    try:
        open_and_run_all(page, relative)
        timings = press_heatmap_slider(page, stem_of(relative))
    finally:
        page.evaluate(CLOSE_NOTEBOOK)
    result = heatmap_result(
        relative, timings, f"BrowserHeatmap, notebook {path.name[:2]} (JupyterLab)"
    )
    record_latency(result)
    print_heatmap(result)


@pytest.fixture(scope="module")
def notebook7(tmp_path_factory):
    with jupyter_server("notebook", tmp_path_factory.mktemp("notebook7")) as served:
        yield served


def test_notebook_7_runs_both_kinds_of_explorer(browser, notebook7, record_latency):
    """Notebook 7 (the classic-looking front end, built on JupyterLab's parts): one notebook
    opened at its own URL, run all, its kernel-drawn slider moved and its BrowserHeatmap
    pressed."""
    base, token = notebook7
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
        latencies = move_kernel_slider(page, stem)
        timings = press_heatmap_slider(page, stem)
    finally:
        page.evaluate("async () => { await window.jupyterapp.shell.currentWidget"
                      "?.sessionContext.shutdown(); }")  # fmt: skip
        page.close()
    kernel = kernel_result(relative, latencies, started, front_end="Notebook 7")
    heatmap = heatmap_result(relative, timings, "BrowserHeatmap, notebook 04 (Notebook 7)")
    record_latency(kernel)
    record_latency(heatmap)
    print(
        f"\n{relative} in Notebook 7: slider -> new image median "
        f"{kernel['slider_to_image_ms_median']} ms over {SLIDER_PRESSES} moves"
    )
    print_heatmap(heatmap)
