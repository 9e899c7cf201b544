"""What every figure builder shares: the Canvas base, PNG rendering, and label checks.

Figures never touch pyplot's state: each owns a matplotlib Figure on its own Agg canvas.
Widgets show them as PNG bytes in an ipywidgets.Image; a notebook cell shows one with
`show_figure`. Every figure is made and rendered in the course's font (style.course_font),
without changing the process's rcParams.
"""

from __future__ import annotations

import inspect
import io
import math

import numpy as np
import PIL.Image
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.text import Text
from matplotlib.transforms import Bbox

from ..support.language import tr
from ..support.validation import is_int
from .style import course_font

# Every figure is rendered at DPI and no text is smaller than MIN_FONT_PT, so that figures
# stay sharp and legible at 100 % zoom (72 dpi was blurry and its 7-pt text too small).
DPI = 100
MIN_FONT_PT = 9
# Cells are annotated with their value only while the numbers stay legible: at most this many
# cells, and (see annotation_fits) only where a MIN_FONT_PT number fits inside a cell.
ANNOTATE_MAX_CELLS = 144
MASKED_COLOUR = "#d0d0d0"
# Fast, lossless and deterministic; zlib's default level 6 costs several times more here.
PNG_COMPRESS_LEVEL = 1


def to_numpy(values) -> np.ndarray:
    """A float array from a tensor (any device, with or without grad) or array-like."""
    if hasattr(values, "detach"):
        values = values.detach().to("cpu").float().numpy()
    return np.asarray(values, dtype=float)


@course_font
def figure_to_png(figure: Figure) -> bytes:
    """Render a Figure to PNG bytes (what an ipywidgets.Image displays)."""
    buffer = io.BytesIO()
    if figure.canvas is None or not isinstance(figure.canvas, FigureCanvasAgg):
        FigureCanvasAgg(figure)
    # savefig, not print_png: only a save draws the artists that a blitting canvas animates,
    # and then only inside axes; the figure's own (a title made with figure.text) are drawn
    # only while they are not animated.
    animated = [artist for artist in figure.get_children() if artist.get_animated()]
    for artist in animated:
        artist.set_animated(False)
    try:
        figure.savefig(
            buffer,
            format="png",
            dpi=figure.dpi,
            pil_kwargs={"compress_level": PNG_COMPRESS_LEVEL},
        )
    finally:
        for artist in animated:
            artist.set_animated(True)
    return buffer.getvalue()


def pixels_to_png(pixels: np.ndarray) -> bytes:
    """PNG bytes of an (height, width, 3 or 4) uint8 array, such as a blitted canvas."""
    buffer = io.BytesIO()
    PIL.Image.fromarray(pixels).save(buffer, format="png", compress_level=PNG_COMPRESS_LEVEL)
    return buffer.getvalue()


def check_labels(name: str, labels, expected: int, *, unit: str | None = None) -> list[str]:
    """`expected` labels as strings (0, 1, ... when None); `unit` says what they label."""
    if labels is None:
        return [str(i) for i in range(expected)]
    labels = [str(label) for label in labels]
    if len(labels) != expected:
        if unit:
            raise ValueError(
                tr(
                    "{name} has {len_labels} labels but there are {expected} {unit}",
                    name=name,
                    len_labels=len(labels),
                    expected=expected,
                    unit=unit,
                )
            )
        raise ValueError(
            tr(
                "{name} has {len_labels} labels but the matrix has {expected}",
                name=name,
                len_labels=len(labels),
                expected=expected,
            )
        )
    return labels


def check_row_index(name: str, index, rows: int) -> None:
    if not is_int(index):
        raise TypeError(
            tr(
                "{name} must be an int row index, got {index_type}",
                name=name,
                index_type=type(index).__name__,
            )
        )
    if not 0 <= index < rows:
        raise ValueError(
            tr(
                "{name} must be a row index in [0, {rows}), got {index}",
                name=name,
                rows=rows,
                index=index,
            )
        )


CELL_MARGIN_PX = 3  # free pixels around a cell's number, across and down


@course_font
def cell_font_size(
    ax, rows: int, cols: int, sample: str = "-0.00", *, largest: float = MIN_FONT_PT
) -> float | None:
    """The one rule for numbers on cells: the largest font size in [MIN_FONT_PT, largest] at
    which `sample` fits in each of the rows x cols cells of `ax` as laid out now, with
    CELL_MARGIN_PX to spare; None when not even MIN_FONT_PT fits (or there are more than
    ANNOTATE_MAX_CELLS cells): then the numbers are left out, never shrunk below legibility."""
    if rows * cols > ANNOTATE_MAX_CELLS:
        return None
    ax.apply_aspect()  # an equal-aspect axes is shrunk only when drawn
    box = ax.get_position()  # in figure fractions
    width_px, height_px = ax.figure.get_size_inches() * ax.figure.dpi
    cell_w, cell_h = box.width * width_px / cols, box.height * height_px / rows
    probe = ax.text(0, 0, sample, fontsize=MIN_FONT_PT)
    text = probe.get_window_extent(ax.figure.canvas.get_renderer())
    probe.remove()
    # Text scales with its font size, so one measurement gives the largest size that fits.
    scale = min(
        (cell_w - CELL_MARGIN_PX) / max(text.width, 1.0),
        (cell_h - CELL_MARGIN_PX) / max(text.height, 1.0),
    )
    size = min(largest, math.floor(MIN_FONT_PT * scale))
    return float(size) if size >= MIN_FONT_PT else None


def annotation_fits(ax, rows: int, cols: int, *, sample: str = "-0.00") -> bool:
    """Whether `sample` at MIN_FONT_PT fits in each cell of `ax` (cell_font_size's rule)."""
    return cell_font_size(ax, rows, cols, sample) is not None


# Where a point's label may go, in points from the point, in order of preference: right
# above, right below, left above, left below.
LABEL_OFFSETS = ((8, 6, "left"), (8, -16, "left"), (-8, 6, "right"), (-8, -16, "right"))


def _placed_at(label, offset, renderer):
    dx, dy, align = offset
    label.set_position((dx, dy))
    label.set_horizontalalignment(align)
    label.update_positions(renderer)
    return Text.get_window_extent(label, renderer)  # the text alone, without a leader line


LABEL_PAD_PX = 3  # the least room between two point labels, so that they never touch


def _padded(box):
    return Bbox.from_extents(
        box.x0 - LABEL_PAD_PX, box.y0 - LABEL_PAD_PX, box.x1 + LABEL_PAD_PX, box.y1 + LABEL_PAD_PX
    )


def _inside(box, frame) -> bool:
    return frame.x0 <= box.x0 <= box.x1 <= frame.x1 and frame.y0 <= box.y0 <= box.y1 <= frame.y1


@course_font
def keep_labels_apart(figure: Figure, labels, offsets=LABEL_OFFSETS) -> None:
    """Move each annotation (placed with textcoords="offset points") to the first offset
    where it stays inside its axes and overlaps no label placed before it (else the first
    inside its axes, else the first), so that neighbouring points' labels never run
    together or onto the tick labels."""
    renderer = figure.canvas.get_renderer()
    placed = []
    for label in labels:
        frame = label.axes.get_window_extent(renderer)
        boxes = [(offset, _placed_at(label, offset, renderer)) for offset in offsets]
        inside = [(o, b) for o, b in boxes if _inside(b, frame)]
        roomy = [o for o, b in inside if not any(_padded(b).overlaps(p) for p in placed)]
        clear = [o for o, b in inside if not any(b.overlaps(p) for p in placed)]
        chosen = (roomy or clear or [o for o, _ in inside] or [offsets[0]])[0]
        placed.append(_placed_at(label, chosen, renderer))


def show_figure(figure: Figure):
    """Display a Figure in a notebook cell as a PNG (no pyplot backend involved)."""
    from IPython.display import Image

    return Image(figure_to_png(figure))


class Canvas:
    """A Figure on its own Agg canvas, kept between draws so that a redraw only swaps data.

    Building a Figure, its axes and text artists costs far more than rendering it, so
    slider-driven widgets keep one canvas and change what its artists show.
    """

    def __init_subclass__(cls, **kwargs):
        # Each canvas makes and redraws its texts in the course's font.
        super().__init_subclass__(**kwargs)
        for name, value in list(vars(cls).items()):
            if inspect.isfunction(value) and (name == "__init__" or not name.startswith("__")):
                setattr(cls, name, course_font(value))

    @course_font
    def __init__(self, *, figsize: tuple[float, float] | None = None, dpi: int = DPI):
        self.figure = Figure(figsize=figsize, dpi=dpi)
        self.canvas = FigureCanvasAgg(self.figure)

    def png(self) -> bytes:
        return figure_to_png(self.figure)


class Blitter:
    """matplotlib's blitting, for canvases that redraw often: render once what never changes
    (frames, labels, titles: text is what costs most) and keep those pixels, then per frame
    restore them and draw only the artists that change over them.

    The changing artists must be animated (`set_animated(True)`) while the background is
    rendered, so that a full draw leaves them out. The last few backgrounds are kept, each
    under what it shows, so that a control moved back and forth between two states (two
    colour scales, two sets of labels) repaints instead of rendering again.
    """

    KEEP = 8  # backgrounds kept per canvas: a megabyte or two each

    def __init__(self, canvas: FigureCanvasAgg):
        self.canvas = canvas
        self._backgrounds: dict = {}  # what a background shows -> its pixels, oldest first
        self._rendering = False

    def forget(self) -> None:
        """Drop every kept background (the canvas's artists changed). A canvas may call this
        on each draw event, for renders by others (savefig); its own renders keep them."""
        if not self._rendering:
            self._backgrounds.clear()

    @course_font
    def frame(self, shows, artists) -> np.ndarray:
        """The canvas, (height, width, 4) RGBA, after painting `artists` over the background,
        which is rendered again only when none kept shows `shows` (whatever it depends on:
        labels, colour limits, ...)."""
        background = self._backgrounds.pop(shows, None)
        if background is None:
            self._rendering = True
            try:
                self.canvas.draw()
            finally:
                self._rendering = False
            background = self.canvas.copy_from_bbox(self.canvas.figure.bbox)
        self._backgrounds[shows] = background  # the most recent last
        while len(self._backgrounds) > self.KEEP:
            del self._backgrounds[next(iter(self._backgrounds))]
        self.canvas.restore_region(background)
        renderer = self.canvas.get_renderer()
        for artist in artists:
            artist.draw(renderer)
        return np.asarray(self.canvas.buffer_rgba())


class Layers:
    """Which artists of a blitted canvas are painted with every frame and which are rendered
    into the background, and what that background shows.

    An axis starts in the background; once its tick labels change between two draws (a
    padded key, a replaced token, a new top-8), it is painted with every frame from then on,
    so that new labels cost a repaint of one axis rather than a full render.
    """

    def __init__(self, blitter: Blitter, changing=()):
        self.blitter = blitter
        self.changing: list = []
        self._labels: dict = {}  # each followed axis's labels at the last draw
        self.paint(*changing)

    def paint(self, *artists, replace: bool = False, forget: bool = True) -> None:
        """Leave `artists` out of the background and paint them with every frame, in zorder
        as a full render does; with `replace`, instead of those named before (a canvas that
        made its artists anew). The kept backgrounds go, unless `forget` is False: artists
        made since the last frame were never in one."""
        if replace:
            self.changing = []
            if forget:
                self._labels = {}
        new = [artist for artist in artists if artist not in self.changing]
        self.changing = sorted([*self.changing, *new], key=lambda a: a.get_zorder())
        for artist in artists:
            artist.set_animated(True)
        if forget:
            self.blitter.forget()

    def follow(self, axis, labels) -> None:
        """Note the labels `axis` shows now; paint it per frame if they changed."""
        labels = tuple(labels)
        if axis not in self._labels and axis not in self.changing:
            axis.set_animated(False)  # in the background until its labels change (a reused axes)
        elif self._labels.get(axis, labels) != labels and axis not in self.changing:
            self.paint(axis)
        self._labels[axis] = labels

    def frame(self, shows) -> np.ndarray:
        """The canvas after a frame: the background rendered again only when `shows` (what it
        depends on) or the labels of an axis in it changed."""
        static = tuple(labels for axis, labels in self._labels.items() if axis not in self.changing)
        return self.blitter.frame((shows, static), self.changing)


class BlitCanvas(Canvas):
    """The one redraw protocol of the canvases an explorer redraws: with `blit=True` (for
    explorers) `png()` renders once what never changes (frames, tick labels, titles: text is
    what costs most) and then paints only the artists a redraw changes over it; with
    `blit=False` every artist is an ordinary one and `png()` renders the whole figure, as
    show_figure and savefig do. Both give the same pixels.

    A subclass makes its artists, names those its `draw` changes with `changing(...)` (again,
    with replace=True, whenever it makes them anew), follows an axis whose tick labels may
    change with `follow(axis, labels)`, and says in `shows()` what else its background
    depends on (axis limits, a colour scale, a title it does not repaint).
    """

    def __init__(
        self, *, figsize: tuple[float, float] | None = None, dpi: int = DPI, blit: bool = False
    ):
        super().__init__(figsize=figsize, dpi=dpi)
        self.blit = blit
        self._layers = Layers(Blitter(self.canvas))
        # A render by others (savefig, figure_to_png) leaves the canvas without the changing
        # artists' pixels under them: the kept backgrounds go (the Blitter's own renders stay).
        self.canvas.mpl_connect("draw_event", lambda _event: self._layers.blitter.forget())

    def changing(self, *artists, replace: bool = False) -> None:
        """The artists a redraw changes: painted over the background with every frame."""
        if self.blit:
            self._layers.paint(*artists, replace=replace)

    def painted(self, *artists) -> None:
        """The artists this frame paints, made anew by `draw` (never in a background, which
        stays as it is): they replace those named before."""
        if self.blit:
            self._layers.paint(*artists, replace=True, forget=False)

    def follow(self, axis, labels) -> None:
        """Note the tick labels `axis` shows now (see Layers.follow)."""
        if self.blit:
            self._layers.follow(axis, labels)

    def shows(self):
        """What the background shows beyond the followed axes' labels: it is rendered again
        when this changes. Nothing by default."""
        return None

    def png(self) -> bytes:
        if not self.blit:
            return figure_to_png(self.figure)
        return pixels_to_png(self._layers.frame(self.shows())[..., :3])
