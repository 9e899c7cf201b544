"""nbhelpers: the support package of the attention and GPT-1 course.

Importing it sets up Japanese-capable plotting (IPAexGothic via matplotlib-fontja).
"""

from .attention import (
    SelfAttention,
    attention,
    scaled_dot_product_attention,
    similarity_scores,
    softmax,
)
from .checks import check_close
from .device import available_devices, describe_environment, device_name, get_device
from .gpt1 import GPT1, GPT1Block, GPT1Config, one_hot
from .masks import causal_mask, padding_mask
from .multihead import MultiHeadAttention, head_counts, merge_heads, split_heads
from .plotting import HeatmapCanvas, attention_heatmap, figure_to_png, show_figure
from .seeding import seed_everything
from .widgets import AttentionMatrixExplorer, FigureExplorer

__all__ = [
    "AttentionMatrixExplorer",
    "FigureExplorer",
    "GPT1",
    "GPT1Block",
    "GPT1Config",
    "HeatmapCanvas",
    "MultiHeadAttention",
    "SelfAttention",
    "attention",
    "attention_heatmap",
    "available_devices",
    "causal_mask",
    "check_close",
    "describe_environment",
    "device_name",
    "figure_to_png",
    "get_device",
    "head_counts",
    "merge_heads",
    "one_hot",
    "padding_mask",
    "scaled_dot_product_attention",
    "seed_everything",
    "show_figure",
    "split_heads",
    "similarity_scores",
    "softmax",
]
