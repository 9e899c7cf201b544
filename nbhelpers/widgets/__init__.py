"""Interactive explorers, one module per notebook, all built on `FigureExplorer`."""

from .attention_explorer import AttentionExplorer
from .base import FigureExplorer
from .bpe import BPEExplorer
from .dot_product_geometry import DotProductGeometryExplorer
from .embeddings import EmbeddingExplorer
from .fine_tuning import FineTuningCurvesExplorer, TaskInputExplorer
from .masking import MaskExplorer
from .multihead import MultiHeadExplorer
from .next_token import NextTokenExplorer
from .scaling import AttentionMemoryExplorer
from .scores import ScoreScalingExplorer
from .softmax import SoftmaxExplorer
from .stack import CausalityExplorer
from .tour import AttentionMatrixExplorer
from .weighted_average import WeightedAverageExplorer

__all__ = [
    "AttentionExplorer",
    "AttentionMatrixExplorer",
    "AttentionMemoryExplorer",
    "BPEExplorer",
    "CausalityExplorer",
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
