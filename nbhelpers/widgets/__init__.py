"""Interactive explorers, one module per notebook, all built on `FigureExplorer`."""

from .base import FigureExplorer
from .tour import AttentionMatrixExplorer

__all__ = ["AttentionMatrixExplorer", "FigureExplorer"]
