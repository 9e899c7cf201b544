"""Interactive explorers, one module per notebook: kernel-drawn ones built on `FigureExplorer`
(PNG in an ipywidgets.Image), and `BrowserHeatmap`, drawn in the browser (anywidget)."""

from .attention_explorer import AttentionExplorer
from .attention_matrix import AttentionMatrixExplorer
from .attention_memory import AttentionMemoryExplorer
from .base import FigureExplorer
from .bpe import BPEExplorer
from .browser_heatmap import BrowserHeatmap
from .causality import CausalityExplorer
from .dot_product_geometry import DotProductGeometryExplorer
from .embeddings import EmbeddingExplorer
from .fine_tuning import ConvergenceExplorer, FineTuningCurvesExplorer, TaskInputExplorer
from .masking import MaskExplorer
from .multihead import MultiHeadExplorer
from .next_token import NextTokenExplorer
from .score_scaling import ScoreScalingExplorer
from .softmax import SoftmaxExplorer
from .weighted_average import WeightedAverageExplorer

__all__ = [
    "AttentionExplorer",
    "AttentionMatrixExplorer",
    "AttentionMemoryExplorer",
    "BPEExplorer",
    "BrowserHeatmap",
    "CausalityExplorer",
    "ConvergenceExplorer",
    "DotProductGeometryExplorer",
    "EmbeddingExplorer",
    "FineTuningCurvesExplorer",
    "FigureExplorer",
    "MaskExplorer",
    "MultiHeadExplorer",
    "NextTokenExplorer",
    "ScoreScalingExplorer",
    "SoftmaxExplorer",
    "TaskInputExplorer",
    "WeightedAverageExplorer",
]
