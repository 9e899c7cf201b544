"""Short texts drawn as cached bitmaps: numbers on heatmap cells and bar labels that a
blitting canvas repaints at every redraw.

A matplotlib Text costs about half a millisecond to draw, and a redraw can repaint hundreds:
`SpriteTexts` renders each distinct (string, colour, size) once with Agg's own text drawing
and afterwards pastes that bitmap, a few microseconds per text. A full render (figure_to_png,
savefig) and a blitted repaint both go through the same `draw`, so they show the same pixels.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

import matplotlib
import matplotlib.artist
import numpy as np
from matplotlib.backends.backend_agg import RendererAgg
from matplotlib.font_manager import FontProperties

# Where a text's ink sits against its position, as a fraction of its height below it:
# centred on it, its bottom at it, its top at it.
ANCHORS = {"center": 0.5, "bottom": 0.0, "top": 1.0}


def sprite(text: str, colour: str, prop: FontProperties, dpi: float) -> np.ndarray:
    """The RGBA bitmap of `text` in `colour` and the font `prop`, cropped to its ink, drawn by
    Agg's own text drawing; cached on everything that changes its pixels, the rcParams that
    Agg reads when it draws text included."""
    hinting = tuple(matplotlib.rcParams[k] for k in ("text.hinting", "text.hinting_factor"))
    antialiased = matplotlib.rcParams["text.antialiased"]
    return _sprite(text, colour, prop.copy(), dpi, hinting, antialiased)


@functools.lru_cache(maxsize=8192)
def _sprite(text, colour, prop, dpi, hinting, antialiased) -> np.ndarray:
    scratch = RendererAgg(1, 1, dpi)
    width, height, _ = scratch.get_text_width_height_descent(text, prop, ismath=False)
    margin = int(prop.get_size_in_points())  # room on every side for overhanging glyphs
    renderer = RendererAgg(int(width) + 2 * margin, int(height) + 2 * margin, dpi)
    gc = renderer.new_gc()
    gc.set_foreground(colour)
    gc.set_antialiased(antialiased)  # as a Text draws, from rcParams["text.antialiased"]
    renderer.draw_text(gc, margin, margin + height, text, prop, 0.0)  # y: the baseline, down
    gc.restore()
    pixels = np.asarray(renderer.buffer_rgba())
    ink = pixels[..., 3] > 0
    if not ink.any():
        return pixels[:0, :0].copy()
    rows, cols = np.flatnonzero(ink.any(1)), np.flatnonzero(ink.any(0))
    return pixels[rows[0] : rows[-1] + 1, cols[0] : cols[-1] + 1].copy()


class SpriteTexts(matplotlib.artist.Artist):
    """Short texts at data positions of `ax`, horizontally centred; `set_texts` says where,
    what, in which colour, and which side of each text's ink sits at its position."""

    def __init__(self, ax, fontsize: float):
        super().__init__()
        self.fontsize = float(fontsize)
        # the font as a Text made here would have it (the course's, in its figures), kept
        self.fontproperties = FontProperties(size=self.fontsize)
        self.set_zorder(3)  # above images and bars, like a Text
        self._positions = np.zeros((0, 2))
        self._texts: list[str] = []
        self._colours: list[str] = []
        self._anchors: list[str] = []
        ax.add_artist(self)
        self.set_clip_box(ax.bbox)

    def set_texts(
        self, positions, texts: Sequence[str], colours: Sequence[str] | str = "black",
        anchors: Sequence[str] | str = "center",
    ) -> None:  # fmt: skip
        """(k, 2) data positions, k strings ("" for none), their colours and anchors."""
        k = len(texts)
        self._positions = np.asarray(positions, dtype=float).reshape(k, 2)
        self._texts = list(texts)
        self._colours = [colours] * k if isinstance(colours, str) else list(colours)
        self._anchors = [anchors] * k if isinstance(anchors, str) else list(anchors)
        self.stale = True

    def get_texts(self) -> list[str]:
        return list(self._texts)

    def placed(self, dpi: float):
        """(text, bitmap, left, bottom) in pixels, y upwards, for each text drawn."""
        points = self.axes.transData.transform(self._positions)  # pixels, y upwards
        for (x, y), text, colour, anchor in zip(
            points, self._texts, self._colours, self._anchors, strict=True
        ):
            if not text:
                continue
            bitmap = sprite(text, colour, self.fontproperties, dpi)
            height, width = bitmap.shape[:2]
            yield text, bitmap, round(x - width / 2), round(y - height * ANCHORS[anchor])

    def extents(self, dpi: float) -> list[tuple[str, tuple[float, float, float, float]]]:
        """(text, (x0, y0, x1, y1)) of each text's ink in pixels, for a layout check: these
        texts are bitmaps, which no Text artist stands for."""
        if not self.get_visible():
            return []
        return [
            (text, (left, bottom, left + bitmap.shape[1], bottom + bitmap.shape[0]))
            for text, bitmap, left, bottom in self.placed(dpi)
        ]

    def draw(self, renderer) -> None:
        if not self.get_visible() or not self._texts:
            return
        gc = renderer.new_gc()
        gc.set_clip_rectangle(self.axes.bbox)
        for _, bitmap, left, bottom in self.placed(renderer.dpi):
            # draw_image's y is the image's bottom side, and its row 0 is the bottom.
            renderer.draw_image(gc, left, bottom, bitmap[::-1])
        gc.restore()
        self.stale = False


class CellNumbers(SpriteTexts):
    """One short number centred on each cell of an image's axes (rows x cols, data coords)."""

    def __init__(self, ax, rows: int, cols: int, fontsize: float):
        super().__init__(ax, fontsize)
        self.rows, self.cols = rows, cols
        self._centres = np.array([(j, i) for i in range(rows) for j in range(cols)], dtype=float)
        self.set_cells([""] * (rows * cols), ["black"] * (rows * cols))

    def set_cells(self, texts: Sequence[str], colours: Sequence[str]) -> None:
        """The strings ("" for none) and their colours, row by row."""
        self.set_texts(self._centres, texts, colours)
