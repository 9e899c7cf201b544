"""The figures layer: pure figure builders and the canvases that redraw them in place.

Each module draws what one or two notebooks show; none touches pyplot's state. Importing
the package sets up the Japanese font (see canvas.py).
"""

from .activations import activation_figure
from .architecture import gpt1_block_figure, transformer_vs_gpt1_figure
from .attention_step import AttentionStepCanvas, attention_step_figure
from .bars import BarCanvas, bar_chart
from .cache_diagram import kv_cache_diagram, online_softmax_figure
from .canvas import Canvas, figure_to_png, show_figure
from .deep_stack import deep_stack_figure
from .dot_product_geometry import DotProductGeometryCanvas, dot_product_geometry_figure
from .embedding import EmbeddingCanvas, embedding_figure
from .fine_tuning_claims import (
    convergence_figure,
    fine_tuning_losses_figure,
    layers_figure,
    probes_figure,
)
from .generation import generation_loop_figure
from .head_split import head_split_figure
from .heads import HeadGridCanvas, head_grid_figure
from .heatmap import HeatmapCanvas, attention_heatmap, attention_heatmaps
from .kv_cache import kv_cache_figure
from .mask_steps import mask_steps_figure
from .memory import MemoryBarsCanvas
from .next_token import next_token_figure
from .positions import position_embedding_figure
from .scaling import against_dk_figure, loglog_figure
from .shape_flow import shape_flow_figure
from .softmax_curve import softmax_curve_figure
from .specialised_heads import accuracy_by_step_figure, specialised_heads_figure
from .teacher_forcing import teacher_forcing_figure
from .tokens import bpe_figure, fine_tuning_curves_figure, token_rows_figure
from .tour import course_model_tour
from .training import rule_kl_figure, training_figure
from .weighted_average import WeightedAverageCanvas, weighted_average_figure
from .weighted_rows import weighted_rows_figure
from .zero_shot import zero_shot_figure

__all__ = [
    "course_model_tour",
    "bpe_figure",
    "convergence_figure",
    "fine_tuning_losses_figure",
    "layers_figure",
    "probes_figure",
    "fine_tuning_curves_figure",
    "token_rows_figure",
    "weighted_rows_figure",
    "zero_shot_figure",
    "softmax_curve_figure",
    "position_embedding_figure",
    "online_softmax_figure",
    "kv_cache_diagram",
    "head_split_figure",
    "generation_loop_figure",
    "AttentionStepCanvas",
    "BarCanvas",
    "Canvas",
    "DotProductGeometryCanvas",
    "EmbeddingCanvas",
    "HeadGridCanvas",
    "HeatmapCanvas",
    "MemoryBarsCanvas",
    "accuracy_by_step_figure",
    "activation_figure",
    "against_dk_figure",
    "attention_heatmap",
    "attention_heatmaps",
    "attention_step_figure",
    "bar_chart",
    "deep_stack_figure",
    "dot_product_geometry_figure",
    "embedding_figure",
    "figure_to_png",
    "gpt1_block_figure",
    "head_grid_figure",
    "kv_cache_figure",
    "loglog_figure",
    "mask_steps_figure",
    "next_token_figure",
    "rule_kl_figure",
    "shape_flow_figure",
    "show_figure",
    "specialised_heads_figure",
    "teacher_forcing_figure",
    "training_figure",
    "transformer_vs_gpt1_figure",
    "WeightedAverageCanvas",
    "weighted_average_figure",
]
