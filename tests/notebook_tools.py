"""Shared helpers for tests that execute notebooks outside nbval."""

from __future__ import annotations

import configparser
import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
WIDGET_MIME = "application/vnd.jupyter.widget-view+json"


def sanitize_patterns() -> list[tuple[re.Pattern, str]]:
    """The same replacements nbval applies (tests/nbval.cfg)."""
    parser = configparser.ConfigParser()
    parser.read(ROOT / "tests" / "nbval.cfg", encoding="utf-8")
    return [(re.compile(parser[s]["regex"]), parser[s]["replace"]) for s in parser.sections()]


def compared_text(cell, patterns) -> list[str]:
    """What nbval compares of a code cell's outputs: stdout and text/plain, sanitized."""
    texts = []
    for output in cell.get("outputs", []):
        if output.get("output_type") == "stream" and output.get("name") == "stdout":
            texts.append(output["text"])
        elif output.get("output_type") in ("execute_result", "display_data"):
            data = output.get("data", {})
            if WIDGET_MIME not in data and "text/plain" in data:
                texts.append(data["text/plain"])
        elif output.get("output_type") == "error":
            texts.append(f"ERROR {output.get('ename')}: {output.get('evalue')}")
    text = "".join(t if isinstance(t, str) else "".join(t) for t in texts)
    for pattern, replacement in patterns:
        text = pattern.sub(replacement, text)
    return text


# Widgets drawn in the page by their own script (anywidget), named by their repr; every other
# widget is a kernel-drawn explorer whose picture is a PNG sent by the kernel.
BROWSER_DRAWN = ("BrowserHeatmap(",)


def widget_reprs(path: Path) -> list[str]:
    """The text/plain of every widget output the notebook has stored."""
    notebook = json.loads(path.read_text(encoding="utf-8"))
    return [
        "".join(output["data"].get("text/plain", ""))
        for cell in notebook["cells"]
        for output in cell.get("outputs", [])
        if WIDGET_MIME in output.get("data", {})
    ]


def has_widget(path: Path, *, drawn_in_browser: bool) -> bool:
    """Whether the notebook shows a browser-drawn widget, or a kernel-drawn one."""
    return any(text.startswith(BROWSER_DRAWN) == drawn_in_browser for text in widget_reprs(path))


def ignores_output(cell) -> bool:
    return "NBVAL_IGNORE_OUTPUT" in "".join(cell.get("source", ""))
