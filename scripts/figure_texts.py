"""Record the text of every matplotlib figure a notebook draws, by cell: run inside the
kernel by notebook_runner.run_notebook(record_figure_texts=True), for the scan of the
Japanese edition (tests/test_japanese_outputs.py). Every text that reaches pixels goes
through `Text.draw`, whether a figure is shown, saved to a PNG or redrawn by blitting, so
that is where the texts are caught; drawing itself is unchanged."""

from __future__ import annotations

import json

# the cells run since install(), counted from 0 -> texts, in the order first drawn
RECORDED: dict[int, list[str]] = {}
_cell = {"index": -1}


def install() -> None:
    from IPython import get_ipython
    from matplotlib.text import Text

    def follow(info):  # a cell is about to run (nbclient does not send the cell's id)
        _cell["index"] += 1

    get_ipython().events.register("pre_run_cell", follow)
    draw = Text.draw

    def recording_draw(self, renderer):
        text = self.get_text()
        if self.get_visible() and text.strip() and _cell["index"] >= 0:
            if "monospace" in self.get_family():  # code, in the font code is shown in
                text = f"`{text}`"
            seen = RECORDED.setdefault(_cell["index"], [])
            if text not in seen:
                seen.append(text)
        return draw(self, renderer)

    Text.draw = recording_draw


def dump() -> str:
    return json.dumps(RECORDED, ensure_ascii=False)
