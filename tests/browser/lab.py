"""JupyterLab (and Notebook 7) as a learner runs them, for the browser tests: a server on
127.0.0.1 serving a throwaway copy of the notebooks, the scripts the tests run in the page
(window.jupyterapp, exposed by --LabApp.expose_app_in_browser), opening a notebook and running
all its cells, and reading the rendered page for what no learner should see."""

from __future__ import annotations

import os
import secrets
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from contextlib import contextmanager
from pathlib import Path

import pytest

from notebook_tools import ROOT

ARTIFACTS = ROOT / "artifacts" / "browser"

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

# What no learner should see on a notebook's rendered page after Run All, read from the DOM
# (the visible text, innerText): an output area that shows nothing where the kernel sent
# text, "undefined" or "[object Object]", NaN in an explorer's readout, an element in a
# readout that the course's templates never write (a token such as <SOS> parsed as a tag),
# a broken image.
PAGE_PROBLEMS = """() => {
  const panel = window.jupyterapp.shell.currentWidget;
  const problems = [];
  const ours = new Set(['B', 'BR', 'SUB', 'SUP', 'SPAN', 'I']);
  panel.content.widgets.forEach((cell, index) => {
    if (cell.model.type !== 'code') return;
    const area = cell.node.querySelector('.jp-OutputArea');
    if (!area) return;
    const shown = area.innerText;
    const sent = cell.model.outputs.toJSON().some((o) =>
      (o.output_type === 'stream' && o.name === 'stdout' && String(o.text).trim()) ||
      (o.data && !o.data['application/vnd.jupyter.widget-view+json']
        && String(o.data['text/plain'] || '').trim()));
    if (sent && !shown.trim() && !area.querySelector('img, canvas'))
      problems.push(`cell ${index}: the kernel sent text, the page shows nothing`);
    for (const word of ['undefined', '[object Object]'])
      if (shown.includes(word)) problems.push(`cell ${index}: shows "${word}"`);
    area.querySelectorAll('.widget-html-content').forEach((readout) => {
      if (/\\bNaN\\b/.test(readout.innerText))
        problems.push(`cell ${index}: NaN in a readout: ${readout.innerText}`);
      readout.querySelectorAll('*').forEach((element) => {
        if (!ours.has(element.tagName))
          problems.push(`cell ${index}: a readout holds <${element.tagName.toLowerCase()}>`
            + ' (a token swallowed as a tag?)');
      });
    });
    area.querySelectorAll('img').forEach((img) => {
      if (!img.complete || img.naturalWidth === 0)
        problems.push(`cell ${index}: a broken image`);
    });
  });
  return problems;
}"""
# The slider key that moves one step without running into the slider's end.


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
    # Every cell rendered, on screen or not, so that the page's text can be read whole (the
    # default windowing renders cells far from the viewport lazily).
    settings = root / "settings" / "@jupyterlab" / "notebook-extension"
    settings.mkdir(parents=True)
    (settings / "tracker.jupyterlab-settings").write_text('{"windowingMode": "none"}')
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


def open_notebook(page, relative: str) -> None:
    """Open the notebook at `relative` with its stored outputs; wait for its kernel."""
    page.evaluate(
        "async (path) => { await window.jupyterapp.commands.execute('docmanager:open', {path}); }",
        relative,
    )
    # The toolbar says "Idle" before the kernel's websocket is up, and a run-all sent then is
    # dropped: wait for the session's kernel itself.
    page.wait_for_function(KERNEL_READY, arg=relative, timeout=90_000)
    assert page.evaluate(ERRORS) == [], f"{relative}: a stored cell shows an error"


def open_and_run_all(page, relative: str) -> None:
    """Open the notebook at `relative`, clear it and run all its cells; no cell may error."""
    open_notebook(page, relative)
    page.evaluate("() => window.jupyterapp.commands.execute('notebook:clear-all-cell-outputs')")
    page.evaluate("() => window.jupyterapp.commands.execute('notebook:run-all-cells')")
    page.wait_for_function(ALL_EXECUTED, timeout=300_000, polling=200)
    assert page.evaluate(ERRORS) == [], f"{relative}: a cell shows an error"


def page_problems(page, relative: str) -> list[str]:
    """What the rendered page shows that no learner should see (PAGE_PROBLEMS); widget
    images and readouts arrive after the cells finish, so they are waited for first."""
    page.wait_for_function(
        "() => [...document.querySelectorAll('.jp-OutputArea img')].every(i => i.complete)",
        timeout=30_000,
    )
    return page.evaluate(PAGE_PROBLEMS)
