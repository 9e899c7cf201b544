"""Notebook 07's architecture diagrams: GPT-1's block with the code's own names, and the
original encoder-decoder Transformer beside GPT-1's decoder-only stack.

Both are drawn on one axes whose data units are inches, so that positions read as lengths
on the page and the text sizes (in points) stay fixed relative to the boxes.
"""

from __future__ import annotations

from matplotlib.figure import Figure
from matplotlib.patches import Circle, FancyBboxPatch

from ..support.language import tr
from .bars import SERIES_COLOURS
from .canvas import Canvas
from .style import GREY, PALE_GREY, course_font, vertical_text

ATTENTION, CROSS, FFN, EMBEDDING = SERIES_COLOURS
NORM = "#7a7a7a"
LINE = "#444444"
NOTE = GREY
JUNCTION_RADIUS = 0.17


def page(width: float, height: float) -> tuple[Figure, object]:
    """A Figure of width x height inches with one frameless axes in inch units."""
    figure = Canvas(figsize=(width, height), dpi=100).figure
    ax = figure.add_axes((0, 0, 1, 1))
    ax.set_xlim(0, width)
    ax.set_ylim(0, height)
    ax.axis("off")
    return figure, ax


def box(ax, x: float, y: float, width: float, height: float, colour: str, *, dashed=False):
    """A rounded box centred on (x, y)."""
    ax.add_patch(
        FancyBboxPatch((x - width / 2, y - height / 2), width, height,
                       boxstyle="round,pad=0.03", facecolor="white" if dashed else colour,
                       alpha=1.0 if dashed else 0.16, edgecolor=colour, linewidth=1.4,
                       linestyle="--" if dashed else "-")
    )  # fmt: skip
    if not dashed:  # an opaque edge over the translucent fill
        ax.add_patch(
            FancyBboxPatch((x - width / 2, y - height / 2), width, height,
                           boxstyle="round,pad=0.03", facecolor="none", edgecolor=colour,
                           linewidth=1.4)
        )  # fmt: skip


def arrow(ax, start, end, *, colour: str = LINE, dashed: bool = False) -> None:
    ax.annotate(
        "", end, start,
        arrowprops={"arrowstyle": "-|>", "color": colour, "linewidth": 1.2,
                    "shrinkA": 0, "shrinkB": 0, "mutation_scale": 11,
                    "linestyle": "--" if dashed else "-"},
    )  # fmt: skip


def path(ax, points, *, colour: str = LINE, dashed: bool = False) -> None:
    """A polyline through `points` with an arrowhead on its last segment."""
    xs, ys = zip(*points[:-1], strict=True)
    ax.plot(xs, ys, color=colour, linewidth=1.2, linestyle="--" if dashed else "-",
            solid_capstyle="butt")  # fmt: skip
    arrow(ax, points[-2], points[-1], colour=colour, dashed=dashed)


def junction(ax, x: float, y: float) -> None:
    """The residual addition: a circled +."""
    ax.add_patch(Circle((x, y), JUNCTION_RADIUS, facecolor="white", edgecolor=LINE, linewidth=1.2))
    ax.text(x, y, "+", ha="center", va="center", fontsize=13)


def code(ax, x: float, y: float, name: str, **kwargs) -> None:
    """A name from nbhelpers/gpt1.py, in the monospace font code is shown in."""
    kwargs = {"ha": "left", "va": "center", "fontsize": 10, "fontweight": "bold"} | kwargs
    ax.text(x, y, name, family="monospace", **kwargs)


def note(ax, x: float, y: float, text: str, **kwargs) -> None:
    kwargs = {"ha": "left", "va": "center", "fontsize": 9, "color": NOTE} | kwargs
    ax.text(x, y, text, **kwargs)


def named_box(ax, x, y, width, name, maths, colour, *, detail=None, name_width=0.9) -> None:
    """A box with the code's name on the left and the formula beside it (and a detail line
    under the formula)."""
    height = 0.66 if detail else 0.5
    box(ax, x, y, width, height, colour)
    left = x - width / 2 + 0.14
    code(ax, left, y, name)
    if detail:
        ax.text(left + name_width, y + 0.12, maths, ha="left", va="center", fontsize=10)
        note(ax, left + name_width, y - 0.15, detail)
    else:
        ax.text(left + name_width, y, maths, ha="left", va="center", fontsize=10)


@course_font
def gpt1_block_figure() -> Figure:
    """GPT1's forward pass from the token ids to the logits, every part labelled with its
    attribute in nbhelpers/gpt1.py and the formula beside it: h_0 = U W_e + W_p, then L
    post-LN blocks (attn, +, ln_1, ffn, +, ln_2), then the tied output h_L W_eᵀ."""
    figure, ax = page(7.4, 10.1)
    x, width = 3.45, 3.7  # the main column and its boxes
    left = x - width / 2
    shape = x + 0.14  # shape notes sit right of the arrows

    # h_0 = U W_e + W_p: a row lookup in W_e, plus the positions' rows of W_p
    note(ax, 2.3, 0.28, tr("token ids  (n,)"), ha="center", color="black", fontsize=10)
    note(ax, 4.95, 0.28, tr("positions 0 … n−1"), ha="center", color="black", fontsize=10)
    box(ax, 2.3, 1.05, 2.15, 0.5, EMBEDDING)
    code(ax, 1.35, 1.05, "W_e")
    ax.text(1.9, 1.05, tr("row lookup $U W_e$"), ha="left", va="center", fontsize=10)
    box(ax, 4.95, 1.05, 2.15, 0.5, EMBEDDING)
    code(ax, 4.0, 1.05, "W_p")
    ax.text(4.55, 1.05, tr("rows 0 … n−1"), ha="left", va="center", fontsize=10)
    arrow(ax, (2.3, 0.45), (2.3, 0.8))
    arrow(ax, (4.95, 0.45), (4.95, 0.8))
    junction(ax, x, 1.78)
    path(ax, [(2.3, 1.3), (2.3, 1.78), (x - JUNCTION_RADIUS, 1.78)])
    path(ax, [(4.95, 1.3), (4.95, 1.78), (x + JUNCTION_RADIUS, 1.78)])
    arrow(ax, (x, 1.78 + JUNCTION_RADIUS), (x, 2.7))
    code(ax, x - 0.14, 2.3, "dropout", ha="right", fontsize=9, fontweight="normal", color=NOTE)
    note(ax, shape, 2.3, "$h_0 = U W_e + W_p$:  (n, d_model)")

    # one block, drawn once, repeated L times
    bottom, top = 2.7, 8.15
    ax.add_patch(
        FancyBboxPatch((0.75, bottom), 5.3, top - bottom, boxstyle="round,pad=0.05",
                       facecolor="#f4f4f4", edgecolor="#9a9a9a", linewidth=1.2, linestyle="--")
    )  # fmt: skip
    code(ax, 0.85, top - 0.12, "GPT1Block", fontsize=9, color=NOTE)
    residual_x = 1.15
    # (split: where the residual branches off, the sublayer, +, the LayerNorm after it)
    for split, name, sublayer_y, maths, detail, colour, add, norm, norm_y in (
        (3.05, "attn", 3.6, "MaskedMultiHead$(h)$",
         tr(r"causal: $i$ sees $j \leq i$; dropout on the weights"),
         ATTENTION, 4.45, "ln_1", 5.05),
        (5.55, "ffn", 6.1, r"GELU$(g W_1 + b_1)\,W_2 + b_2$",
         tr("(n, d_model) → (n, 4·d_model) → (n, d_model)"), FFN, 6.95, "ln_2", 7.55),
    ):  # fmt: skip
        ax.plot([x, x], [split - 0.35, split], color=LINE, linewidth=1.2)
        ax.plot(x, split, "o", color=LINE, markersize=4)
        named_box(ax, x, sublayer_y, width, name, maths, colour, detail=detail, name_width=0.62)
        arrow(ax, (x, split), (x, sublayer_y - 0.33))
        arrow(ax, (x, sublayer_y + 0.33), (x, add - JUNCTION_RADIUS))
        code(ax, x - 0.14, (sublayer_y + 0.33 + add - JUNCTION_RADIUS) / 2, "dropout",
             ha="right", fontsize=9, fontweight="normal", color=NOTE)  # fmt: skip
        junction(ax, x, add)
        # the residual connection: the sublayer's input, added back unchanged
        path(ax, [(x, split), (residual_x, split), (residual_x, add), (x - JUNCTION_RADIUS, add)])
        named_box(ax, x, norm_y, width, norm, f"LayerNorm  $\\mathrm{{LN}}_{norm[-1]}$", NORM)
        arrow(ax, (x, add + JUNCTION_RADIUS), (x, norm_y - 0.25))
    residual, rotation = vertical_text(tr("residual"))  # 残差 stands upright, stacked
    note(ax, residual_x + 0.08, 3.9, residual, rotation=rotation, ha="left", linespacing=1.0)
    note(ax, residual_x + 0.08, 6.4, residual, rotation=rotation, ha="left", linespacing=1.0)
    note(ax, shape, 5.43, "$g$:  (n, d_model)")

    # × L: the bracket, and what enters and leaves the stack
    ax.plot([6.2, 6.35, 6.35, 6.2], [bottom, bottom, top, top], color=LINE, linewidth=1.2)
    ax.text(6.5, (bottom + top) / 2 + 0.35, "× L", ha="left", va="center", fontsize=14)
    code(ax, 6.5, (bottom + top) / 2 - 0.05, "blocks", fontsize=10)
    note(ax, 6.5, (bottom + top) / 2 - 0.35, "L = n_layers")
    note(ax, shape, bottom + 0.17, "$h_{l-1}$:  (n, d_model)")
    arrow(ax, (x, 7.8), (x, 8.9))
    note(ax, shape, 8.5, "$h_L$:  (n, d_model)")

    # the output layer is W_e itself, transposed: the same storage
    logits = tr(r"logits $h_L W_e^\top$:  (n, n_vocab)")
    named_box(ax, x, 9.15, width, "W_e.weight.T", logits, EMBEDDING, name_width=1.3)
    tie_x = 0.42
    path(ax, [(1.22, 1.05), (tie_x, 1.05), (tie_x, 9.15), (left - 0.04, 9.15)],
         colour=EMBEDDING, dashed=True)  # fmt: skip
    # to the left of the dashed line, so that the line never strikes the text through
    note(ax, tie_x - 0.06, 5.3, tr("tied: the same matrix W_e, transposed"), rotation=90,
         ha="right", color=EMBEDDING)  # fmt: skip
    arrow(ax, (x, 9.4), (x, 9.7))
    note(ax, x, 9.85, tr("next-token probabilities: softmax over each row (notebook 09)"),
         ha="center")  # fmt: skip
    return figure


def stack(ax, x, layers, *, width=2.6, frame=None, repeat=None) -> None:
    """A schematic stack at column x: `layers` are (y, text, detail, colour, dashed) from the
    bottom up, joined by arrows; `frame` = (bottom, top) draws the repeated layer's outline
    and `repeat` its count in the outline's top corner."""
    heights = []
    for y, text, detail, colour, dashed in layers:
        height = 0.34 if detail is None and colour == NORM else 0.56
        heights.append(height)
        box(ax, x, y, width, height, colour, dashed=dashed)
        style = {"color": NOTE} if dashed else {}
        if detail:
            ax.text(x, y + 0.1, text, ha="center", va="center", fontsize=10, **style)
            note(ax, x, y - 0.13, detail, ha="center")
        else:
            ax.text(x, y, text, ha="center", va="center", fontsize=10 if colour != NORM else 9,
                    **style)  # fmt: skip
    for (y0, *_), (y1, *_), h0, h1 in zip(layers, layers[1:], heights, heights[1:], strict=False):
        arrow(ax, (x, y0 + h0 / 2 + 0.03), (x, y1 - h1 / 2 - 0.03))
    if frame:
        bottom, top = frame
        ax.add_patch(
            FancyBboxPatch((x - width / 2 - 0.15, bottom), width + 0.3, top - bottom,
                           boxstyle="round,pad=0.04", facecolor="none", edgecolor="#9a9a9a",
                           linewidth=1.1, linestyle="--")
        )  # fmt: skip
        ax.text(x + width / 2 + 0.1, top - 0.06, repeat, ha="right", va="top", fontsize=11)


@course_font
def transformer_vs_gpt1_figure() -> Figure:
    """Left: the original Transformer (Vaswani et al., 2017), an encoder (unmasked
    self-attention, FFN) whose output feeds the decoder's cross-attention, and a decoder
    (masked self-attention, cross-attention, FFN). Right: GPT-1, the decoder without
    cross-attention: masked self-attention and FFN only. Each sublayer is followed by an
    add & LayerNorm (post-LN) in both."""
    figure, ax = page(11.0, 7.2)
    encoder_x, decoder_x, gpt_x = 1.75, 5.45, 9.2
    rows = {"attn": 1.95, "norm1": 2.55, "cross": 3.15, "norm2": 3.75, "ffn": 4.35, "norm3": 4.95}
    add_norm = tr("add & LayerNorm")

    # the encoder: every source token attends to every source token
    stack(ax, encoder_x, [
        (rows["attn"], tr("self-attention"), tr("unmasked: each token sees all m"), ATTENTION,
         False),
        (rows["norm1"], add_norm, None, NORM, False),
        (rows["cross"], tr("feed-forward (FFN)"), tr("position-wise"), FFN, False),
        (rows["norm2"], add_norm, None, NORM, False),
    ], frame=(1.5, 4.35), repeat="× N = 6")  # fmt: skip
    # the decoder: its own prefix, then the source through cross-attention
    stack(ax, decoder_x, [
        (rows["attn"], tr("masked self-attention"), tr(r"position $i$ sees $j \leq i$"),
         ATTENTION,
         False),
        (rows["norm1"], add_norm, None, NORM, False),
        (rows["cross"], tr("cross-attention"), tr("Q: decoder;  K, V: encoder"), CROSS, False),
        (rows["norm2"], add_norm, None, NORM, False),
        (rows["ffn"], tr("feed-forward (FFN)"), tr("position-wise"), FFN, False),
        (rows["norm3"], add_norm, None, NORM, False),
    ], frame=(1.5, 5.55), repeat="× N = 6")  # fmt: skip
    # GPT-1: the same decoder, cross-attention removed
    stack(ax, gpt_x, [
        (rows["attn"], tr("masked self-attention"), tr(r"position $i$ sees $j \leq i$"),
         ATTENTION,
         False),
        (rows["norm1"], add_norm, None, NORM, False),
        ((rows["cross"] + rows["norm2"]) / 2, tr("no cross-attention"),
         tr("no encoder: nothing to attend to"), NORM, True),
        (rows["ffn"], tr("feed-forward (FFN)"), tr("position-wise"), FFN, False),
        (rows["norm3"], add_norm, None, NORM, False),
    ], frame=(1.5, 5.55), repeat="× L = 12")  # fmt: skip

    # inputs and outputs
    for column, words, embedding in (
        (encoder_x, tr("source sentence (m tokens)"), tr("embedding + positions")),
        (decoder_x, tr("target written so far (n tokens)"), tr("embedding + positions")),
        (gpt_x, tr("the prefix:  犬 が 河岸 を"), r"$U W_e + W_p$"),
    ):
        note(ax, column, 0.28, words, ha="center", color="black", fontsize=10)
        box(ax, column, 0.95, 2.3, 0.4, EMBEDDING)
        ax.text(column, 0.95, embedding, ha="center", va="center", fontsize=10)
        arrow(ax, (column, 0.45), (column, 0.72))
        arrow(ax, (column, 1.18), (column, rows["attn"] - 0.31))
    for column, text in ((decoder_x, tr("linear + softmax: next target token")),
                         (gpt_x, tr(r"$h_L W_e^\top$ + softmax: next token"))):  # fmt: skip
        box(ax, column, 6.05, 2.6, 0.4, EMBEDDING)
        ax.text(column, 6.05, text, ha="center", va="center", fontsize=10)
        arrow(ax, (column, rows["norm3"] + 0.2), (column, 5.82))
    # the encoder's output, once per decoder layer, as the keys and values of cross-attention
    hand_over = (encoder_x + decoder_x) / 2 + 0.05
    path(ax, [(encoder_x, rows["norm2"] + 0.2), (encoder_x, 4.95), (hand_over, 4.95),
              (hand_over, rows["cross"]), (decoder_x - 1.33, rows["cross"])],
         colour=CROSS)  # fmt: skip
    note(ax, hand_over - 0.1, 5.3,
         tr("encoder output (m, d_model),\nprojected to K, V in every decoder layer"), ha="right",
         color=CROSS)  # fmt: skip

    ax.plot([7.3, 7.3], [0.2, 6.9], color=PALE_GREY, linewidth=1.0)
    ax.text((encoder_x + decoder_x) / 2, 6.8,
            tr("Transformer (Vaswani et al., 2017): encoder–decoder"),
            ha="center", va="center", fontsize=11)  # fmt: skip
    ax.text(gpt_x, 6.8, tr("GPT-1 (Radford et al., 2018): decoder-only"), ha="center", va="center",
            fontsize=11)  # fmt: skip
    note(ax, (encoder_x + decoder_x) / 2, 6.52, tr("translation: read a source, write a target"),
         ha="center")  # fmt: skip
    note(ax, gpt_x, 6.52, tr("language model: continue one text"), ha="center")
    return figure
