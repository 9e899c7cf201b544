"""Where a figure's texts collide or stick out: the layout half of the legibility rule.

`layout_problems(figure)` renders the figure as it is shown, then compares the window
extents of its visible, non-empty texts, the Text artists and the texts drawn as bitmaps
(SpriteTexts: cell numbers, bar labels) alike: two texts whose boxes overlap in both
directions collide ("0.240.25"); two on the same line closer than GAP_PX touch ("1.001.00"
with a hair between them); a text whose box leaves the figure, or a bitmap text its axes,
is clipped.
"""

from __future__ import annotations

import matplotlib.text
from matplotlib.text import Annotation, Text

from nbhelpers.figures.canvas import figure_to_png

OVERLAP_PX = 0.0  # any overlap at all: texts that touch read as one ("0.240.25")
GAP_PX = 2.0  # side by side on one line, texts closer than this read as one word


def undrawn_tick_labels(figure) -> set[int]:
    """Tick labels that matplotlib keeps but does not draw (ticks outside the view)."""
    kept, drawn = set(), set()
    for ax in figure.axes:
        for axis in (ax.xaxis, ax.yaxis):
            for tick in [*axis.get_major_ticks(), *axis.get_minor_ticks()]:
                kept.update((id(tick.label1), id(tick.label2)))
            if not (ax.axison and axis.get_visible()):
                continue  # an axis switched off draws none of its ticks
            for tick in axis._update_ticks():  # the ticks a draw would show
                drawn.update((id(tick.label1), id(tick.label2)))
    return kept - drawn


def visible_texts(figure):
    hidden = undrawn_tick_labels(figure)
    for text in figure.findobj(matplotlib.text.Text):
        if id(text) in hidden:
            continue
        if not text.get_visible() or not text.get_text().strip():
            continue
        axes = text.axes
        if axes is not None and not axes.get_visible():
            continue
        if text.get_alpha() == 0:
            continue
        yield text


def text_boxes(figure):
    """(text, (x0, y0, x1, y1), clip box or None) in pixels for every text the figure shows:
    Text artists by their window extent, bitmap texts by their ink, clipped to their axes."""
    from nbhelpers.figures.sprite_text import SpriteTexts

    renderer = figure.canvas.get_renderer()
    for text in visible_texts(figure):
        if isinstance(text, Annotation):  # its text, not the leader line it may draw
            text.update_positions(renderer)
        box = Text.get_window_extent(text, renderer)
        if box.width > 0 and box.height > 0:
            yield text.get_text(), (box.x0, box.y0, box.x1, box.y1), None
    for sprites in figure.findobj(SpriteTexts):
        if sprites.axes is None or not sprites.axes.get_visible():
            continue
        clip = sprites.axes.bbox
        for text, box in sprites.extents(figure.dpi):
            yield text, box, (clip.x0, clip.y0, clip.x1, clip.y1)


def text_counts(figure) -> tuple[int, int]:
    """(Text artists, bitmap-drawn texts) that text_boxes reads in `figure`: what the layout
    test sees, split by how each text is drawn."""
    boxes = list(text_boxes(figure))
    bitmap = sum(1 for _, _, clip in boxes if clip is not None)
    return len(boxes) - bitmap, bitmap


def layout_problems(figure) -> list[str]:
    figure_to_png(figure)  # lays the figure out as it is shown
    width, height = figure.bbox.width, figure.bbox.height
    boxes = list(text_boxes(figure))
    problems = []
    for text, (x0, y0, x1, y1), clip in boxes:
        left, bottom, right, top = clip or (0, 0, width, height)
        if (
            x0 < left - OVERLAP_PX
            or y0 < bottom - OVERLAP_PX
            or x1 > right + OVERLAP_PX
            or y1 > top + OVERLAP_PX
        ):
            problems.append(f"clipped: {text!r}")
    for index, (first, a, _) in enumerate(boxes):
        for second, b, _ in boxes[index + 1 :]:
            dx = min(a[2], b[2]) - max(a[0], b[0])  # > 0: the boxes overlap horizontally
            dy = min(a[3], b[3]) - max(a[1], b[1])
            if dx > OVERLAP_PX and dy > OVERLAP_PX:
                problems.append(f"overlap: {first!r} and {second!r}")
            elif dy > 0.5 * min(a[3] - a[1], b[3] - b[1]) and -GAP_PX < dx <= OVERLAP_PX:
                problems.append(f"touching: {first!r} and {second!r} ({-dx:.1f} px apart)")
    return problems


def cell_texts(ax) -> list[str]:
    """The numbers (or ×) a heatmap canvas paints on its cells, row by row: CellNumbers
    bitmaps, not Text artists."""
    from nbhelpers.figures.sprite_text import CellNumbers

    return [t for a in ax.artists if isinstance(a, CellNumbers) for t in a.get_texts()]
