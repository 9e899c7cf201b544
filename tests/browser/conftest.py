"""The browser the browser tests drive: found as find_browser.py says; with none they are
skipped with one line saying what was looked for (under CI=true they fail)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import NamedTuple

import pytest

from browser.find_browser import HOW_TO_INSTALL, LOOKED_FOR, BrowserSettingError, find_browser
from browser.lab import jupyter_server


class Lab(NamedTuple):
    base: str
    token: str
    root: Path


LATENCIES = Path(__file__).resolve().parents[2] / "artifacts" / "browser" / "latency.jsonl"


def pytest_configure(config):
    # Emptied once per run, by the process that starts it: under pytest-xdist (`make browser`
    # runs two workers) each worker appends its own lines.
    if not hasattr(config, "workerinput"):
        LATENCIES.unlink(missing_ok=True)


@pytest.fixture(scope="session")
def record_latency():
    """Append one measurement to artifacts/browser/latency.jsonl (emptied once per run;
    benchmarks/bench_browser.py runs the tests one at a time and turns it into the README's
    figures)."""
    LATENCIES.parent.mkdir(parents=True, exist_ok=True)

    def record(result: dict) -> None:
        with open(LATENCIES, "a", encoding="utf-8") as f:
            f.write(json.dumps(result, ensure_ascii=False) + "\n")

    return record


@pytest.fixture(scope="session")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        try:
            executable = find_browser(playwright_chromium=lambda: p.chromium.executable_path)
        except BrowserSettingError as error:
            pytest.fail(str(error), pytrace=False)
        if executable is None:
            message = f"no Chromium or Chrome found (looked for {LOOKED_FOR}); install one: "
            if os.environ.get("CI"):
                pytest.fail(f"CI runs the browser tests: {message}{HOW_TO_INSTALL}")
            pytest.skip(f"browser tests skipped: {message}{HOW_TO_INSTALL}")
        browser = p.chromium.launch(
            executable_path=str(executable),
            args=[
                "--no-sandbox",
                "--disable-gpu",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--no-first-run",
            ],
        )
        yield browser
        browser.close()


@pytest.fixture(scope="session")
def lab(tmp_path_factory):
    """One JupyterLab server for every browser test: (base URL, token, the folder it serves,
    where a test may write notebooks of its own)."""
    root = tmp_path_factory.mktemp("lab")
    with jupyter_server("lab", root) as (base, token):
        yield Lab(base, token, root)


@pytest.fixture(scope="session")
def page(browser, lab):
    """One JupyterLab page for every notebook: the app loads once, each test opens its own
    notebook in it and closes it (and its kernel) at the end."""
    base, token = lab.base, lab.token
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    page.goto(f"{base}/lab/workspaces/test?token={token}&reset")
    page.wait_for_function("() => !!window.jupyterapp", timeout=90_000)
    page.evaluate("async () => { await window.jupyterapp.restored; }")
    yield page
    page.close()


@pytest.fixture(scope="session")
def notebook7(tmp_path_factory):
    """A Notebook 7 server (the other front end the README names), like `lab`."""
    root = tmp_path_factory.mktemp("notebook7")
    with jupyter_server("notebook", root) as (base, token):
        yield Lab(base, token, root)
