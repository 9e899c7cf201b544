"""The course's colours, its font, and the one rule for text drawn on a coloured cell: every
figure takes them from here, so a colour means the same thing in every notebook.

The font is IPAexGothic (matplotlib-fontja), so that 犬 / が / 河岸 render without missing
glyphs. The course's figures use it through `course_font` (around each figure builder, each
canvas's methods and each render) and leave the process's rcParams as they were: a learner's
own pyplot figures keep their font.
"""

from __future__ import annotations

import functools
import re

import matplotlib
import numpy as np

_family = list(matplotlib.rcParams["font.family"])
import matplotlib_fontja  # noqa: E402  (registers IPAexGothic with matplotlib, and sets it)

matplotlib.rcParams["font.family"] = _family  # ... which the course leaves as it found it
COURSE_FAMILY = [matplotlib_fontja.matplotlib_fontja.FONT_NAME]


def course_font(fn):
    """`fn` run with the course's font: texts made (or laid out, or rendered) inside use it.
    Only rcParams["font.family"] is swapped, and back afterwards (a full rc_context would copy
    every rcParam at each call, and a redraw makes many)."""

    @functools.wraps(fn)
    def wrapped(*args, **kwargs):
        rc = matplotlib.rcParams
        before = rc["font.family"]
        if before == COURSE_FAMILY:  # inside another course_font call already
            return fn(*args, **kwargs)
        rc["font.family"] = COURSE_FAMILY
        try:
            return fn(*args, **kwargs)
        finally:
            rc["font.family"] = before

    return wrapped


# Series in a fixed order (blue, orange, green, red): the first series of any figure is blue.
SERIES = ("#3b6ea8", "#e08a2c", "#4c9a5b", "#b5495b")
BLUE, ORANGE, GREEN, RED = SERIES
INK = "#333333"  # dark text and outlines that are not data
GREY = "#555555"  # reference lines, annotations, the second voice of a figure
MID_GREY = "#777777"
LIGHT_GREY = "#999999"  # what is faded: past steps, guides
PALE_GREY = "#bbbbbb"
BLOCKED = "#707070"  # the × of a masked cell
LUMINANCE = np.array([0.299, 0.587, 0.114])  # ITU-R BT.601 weights of R, G, B


def text_colours(rgba: np.ndarray) -> np.ndarray:
    """ "black" on a light cell, "white" on a dark one, judged by the cell colour's luminance
    (rgba (..., 4) in [0, 1]), so numbers stay legible on any colour map."""
    light = np.asarray(rgba)[..., :3] @ LUMINANCE > 0.5
    return np.where(light, "black", "white")


def cell_text_colours(image, values) -> np.ndarray:
    """text_colours for the cells of an imshow `image` holding `values`."""
    return text_colours(image.cmap(image.norm(values)))


# Latin letters and the marks of tags and mathematics: text with any of them reads sideways.
_SIDEWAYS = re.compile(r"[A-Za-z<>_$\\]")


def vertical_text(text: str) -> tuple[str, float]:
    """(text, rotation) for a label that runs top to bottom: Japanese stacked one character
    under another, each upright, as Japanese is written vertically (縦書き); text with Latin
    letters, such as <EOS> or a formula, turned on its side instead."""
    if text and not _SIDEWAYS.search(text):
        return "\n".join(ch for ch in text if not ch.isspace()), 0.0
    return text, 90.0


def vertical_tick_labels(ax, labels, *, axis: str = "x", **text_kwargs) -> None:
    """Tick labels on `axis` of `ax` that run top to bottom (see vertical_text), for a
    vocabulary too wide to write across."""
    texts = [vertical_text(str(label)) for label in labels]
    setter = ax.set_xticklabels if axis == "x" else ax.set_yticklabels
    for tick, (_, rotation) in zip(
        setter([text for text, _ in texts], **text_kwargs), texts, strict=True
    ):
        tick.set_rotation(rotation)
        tick.set_linespacing(1.0)
        if axis == "x":
            tick.set_verticalalignment("top")
            tick.set_horizontalalignment("center")
