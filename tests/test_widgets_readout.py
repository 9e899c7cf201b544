"""Every explorer writes its readout through one helper (widgets/readout.py) that escapes
what it is given: tokens such as <SOS>, <EOS> and <PAD> show as text, never as tags the page
swallows. The browser tests check the same in the rendered page."""

from __future__ import annotations

import ast
from html.parser import HTMLParser
from pathlib import Path

import pytest
import torch

from explorer_checks import OUR_MARKUP, TAG_EXPLORERS, TAGS, scores
from nbhelpers.widgets import MaskExplorer
from nbhelpers.widgets import readout as readout_module

WIDGETS = Path(readout_module.__file__).resolve().parent


class Readout(HTMLParser):
    """The text a page shows for an HTML readout, and the tags it holds."""

    def __init__(self, html: str):
        super().__init__(convert_charrefs=True)
        self.text, self.tags = "", set()
        self.feed(html)

    def handle_starttag(self, tag, attrs):
        self.tags.add(tag)

    def handle_data(self, data):
        self.text += data


@pytest.mark.parametrize("make", TAG_EXPLORERS.values(), ids=TAG_EXPLORERS.keys())
def test_tokens_that_look_like_tags_are_shown_as_text(make):
    torch.manual_seed(0)
    explorer = make()
    page = Readout(explorer.readout.value)
    shown = [token for token in TAGS if token in page.text]
    assert shown, f"the readout names none of the tokens: {page.text!r}"
    assert page.tags <= OUR_MARKUP, f"tokens became tags: {page.tags - OUR_MARKUP}"
    explorer.close()


def test_only_the_helper_writes_a_readout():
    """No explorer sets readout.value itself or escapes by hand: FigureExplorer.show and
    readout.markup are the one way, so a new explorer cannot forget to escape."""
    offenders = []
    for path in sorted(WIDGETS.glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Assign):
                for target in node.targets:
                    if (
                        isinstance(target, ast.Attribute)
                        and target.attr == "value"
                        and isinstance(target.value, ast.Attribute)
                        and target.value.attr == "readout"
                        and path.name != "base.py"
                    ):
                        offenders.append(f"{path.name}:{node.lineno} sets readout.value")
            if (
                isinstance(node, ast.Attribute)
                and node.attr == "escape"
                and getattr(node.value, "id", None) == "html"
                and path.name not in ("readout.py", "browser_heatmap.py")
            ):
                offenders.append(f"{path.name}:{node.lineno} escapes by hand")
    assert not offenders, offenders


def test_markup_escapes_text_and_keeps_number_formats():
    from nbhelpers.widgets.readout import error_markup, markup, markup_n

    made = markup("query <b>{query}</b>: {weight:.2f}", query="<SOS>", weight=0.123456)
    assert made == "query <b>&lt;SOS&gt;</b>: 0.12"
    assert (
        markup_n(
            "its {n} masked weight is exactly {total:g}; ",
            "its {n} masked weights are exactly {total:g}; ",
            1,
            total=0.0,
        )
        == "its 1 masked weight is exactly 0; "
    )
    assert "&lt;PAD&gt;" in error_markup("unknown token <PAD>")
    assert markup("{x:.1f}", x=torch.tensor(2.25)) == "2.2"  # a 0-dim tensor is a number


def test_counts_of_one_read_in_the_singular():
    explorer = MaskExplorer(["a", "b", "c"], scores(3), causal=True)
    explorer.query.value = 1  # sees a and b: one masked weight
    assert "its 1 masked weight is exactly 0" in Readout(explorer.readout.value).text
    explorer.close()
