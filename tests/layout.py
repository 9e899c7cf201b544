"""Where a figure's texts collide or stick out: the layout half of the legibility rule.

`layout_problems(figure)` renders the figure as it is shown, then compares the window
extents of its visible, non-empty texts: two texts whose boxes overlap by more than
OVERLAP_PX in both directions collide ("0.240.25"), and a text whose box leaves the figure
by more than OVERLAP_PX is clipped.
"""

from __future__ import annotations

import matplotlib.text

from nbhelpers.figures.canvas import figure_to_png

OVERLAP_PX = 0.0  # any overlap at all: texts that touch read as one ("0.240.25")


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


def layout_problems(figure) -> list[str]:
    figure_to_png(figure)  # lays the figure out as it is shown
    renderer = figure.canvas.get_renderer()
    width, height = figure.bbox.width, figure.bbox.height
    boxes = []
    for text in visible_texts(figure):
        box = text.get_window_extent(renderer)
        if box.width <= 0 or box.height <= 0:
            continue
        boxes.append((text, box))
    problems = []
    for text, box in boxes:
        if (
            box.x0 < -OVERLAP_PX
            or box.y0 < -OVERLAP_PX
            or box.x1 > width + OVERLAP_PX
            or box.y1 > height + OVERLAP_PX
        ):
            problems.append(f"clipped: {text.get_text()!r}")
    for index, (first, a) in enumerate(boxes):
        for second, b in boxes[index + 1 :]:
            dx = min(a.x1, b.x1) - max(a.x0, b.x0)
            dy = min(a.y1, b.y1) - max(a.y0, b.y0)
            if dx > OVERLAP_PX and dy > OVERLAP_PX:
                problems.append(f"overlap: {first.get_text()!r} and {second.get_text()!r}")
    return problems


def cell_texts(ax) -> list[str]:
    """The numbers (or ×) a heatmap canvas paints on its cells, row by row: CellNumbers
    bitmaps, not Text artists."""
    from nbhelpers.figures.sprite_text import CellNumbers

    return [t for a in ax.artists if isinstance(a, CellNumbers) for t in a.get_texts()]
