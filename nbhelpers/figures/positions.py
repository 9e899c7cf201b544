"""Notebook 06's picture of learned position embeddings: the rows of a trained W_p, and how
alike the positions' vectors are (cosine similarity)."""

from __future__ import annotations

import matplotlib
import numpy as np
from matplotlib.figure import Figure

from ..support.language import tr
from .canvas import Canvas, to_numpy
from .style import course_font


@course_font
def position_embedding_figure(W_p, *, title: str | None = None) -> Figure:
    """Left: W_p itself, one row per position (n_ctx × d_model). Right: the cosine
    similarity of every pair of rows: a band along the diagonal means neighbouring
    positions get similar vectors."""
    W = to_numpy(W_p)
    if W.ndim != 2 or min(W.shape) < 1:
        raise ValueError(
            tr("W_p must be a matrix (n_ctx, d_model), got shape {W_shape}", W_shape=W.shape)
        )
    unit = W / np.maximum(np.linalg.norm(W, axis=1, keepdims=True), 1e-12)
    similarity = unit @ unit.T
    figure = Canvas(figsize=(10.4, 4.2)).figure
    left, right = figure.subplots(1, 2, gridspec_kw={"width_ratios": [1.6, 1.0]})
    figure.subplots_adjust(left=0.07, right=0.95, bottom=0.14, top=0.84, wspace=0.25)
    limit = max(float(np.abs(W).max()), 1e-9)
    image = left.imshow(W, cmap="RdBu_r", vmin=-limit, vmax=limit, aspect="auto")
    left.set_xlabel(tr("feature"))
    left.set_ylabel(tr("position i"))
    left.set_title("$W_p$", fontsize=11)
    figure.colorbar(image, ax=left, fraction=0.04, pad=0.02)
    image = right.imshow(similarity, cmap="RdBu_r", vmin=-1, vmax=1, aspect="auto")
    right.set_xlabel(tr("position j"))
    right.set_ylabel(tr("position i"))
    right.set_title(tr("cos(row i, row j)"), fontsize=11)
    figure.colorbar(image, ax=right, fraction=0.046, pad=0.03)
    for ax in (left, right):
        ax.yaxis.set_major_locator(matplotlib.ticker.MaxNLocator(integer=True, nbins=6))
        ax.xaxis.set_major_locator(matplotlib.ticker.MaxNLocator(integer=True, nbins=8))
        ax.tick_params(labelsize=9)
    figure.suptitle(title or tr("Learned position embeddings"), fontsize=12)
    return figure
