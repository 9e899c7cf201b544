"""nbhelpers: the support package of the attention and GPT-1 course.

Four layers, each importing only from the ones below it:

* the formulas, in notebook order: attention, masks, multihead, gpt1, inference, kv_cache,
  training, statistics, memory, and the generated corpus (`corpus/`);
* `figures/`: pure figure builders and the canvases that redraw them;
* `widgets/`: the explorers, wiring controls to a formula and a figure;
* `support/`: argument checks, device, seeding, check_close, benchmarking, and the language
  of the course's own words (`set_language("ja")`).

Importing it sets up Japanese-capable plotting (IPAexGothic via matplotlib-fontja).
"""

from .attention import (
    SelfAttention,
    attention,
    scaled_dot_product_attention,
    similarity_scores,
    softmax,
)
from .corpus import JapaneseGrammar, Tokenizer
from .figures import (
    AttentionStepCanvas,
    EmbeddingCanvas,
    HeadGridCanvas,
    HeatmapCanvas,
    activation_figure,
    against_dk_figure,
    attention_heatmap,
    attention_heatmaps,
    attention_step_figure,
    dot_product_geometry_figure,
    embedding_figure,
    figure_to_png,
    head_grid_figure,
    shape_flow_figure,
    show_figure,
    teacher_forcing_figure,
    weighted_average_figure,
)
from .gpt1 import GPT1, GPT1Block, GPT1Config, one_hot, parameter_breakdown
from .inference import generate, log_likelihood, next_token_distribution
from .kv_cache import KVCache, check_cache_agrees, generate_with_cache, generate_without_cache
from .masks import causal_mask, padding_mask
from .multihead import MultiHeadAttention, head_counts, merge_heads, split_heads
from .statistics import dot_product_variance, kl_divergence, random_dot_products, row_entropy
from .support.checks import check_close
from .support.device import available_devices, describe_environment, device_name, get_device
from .support.language import language, set_language
from .support.seeding import seed_everything
from .training import evaluate_by_rule, load_course_model, sample_sentences
from .widgets import (
    AttentionExplorer,
    AttentionMatrixExplorer,
    AttentionMemoryExplorer,
    CausalityExplorer,
    DotProductGeometryExplorer,
    EmbeddingExplorer,
    FigureExplorer,
    MaskExplorer,
    MultiHeadExplorer,
    NextTokenExplorer,
    ScoreScalingExplorer,
    SoftmaxExplorer,
    WeightedAverageExplorer,
)

__all__ = [
    "AttentionExplorer",
    "AttentionMatrixExplorer",
    "AttentionMemoryExplorer",
    "CausalityExplorer",
    "DotProductGeometryExplorer",
    "AttentionStepCanvas",
    "EmbeddingCanvas",
    "EmbeddingExplorer",
    "FigureExplorer",
    "GPT1",
    "GPT1Block",
    "GPT1Config",
    "HeadGridCanvas",
    "HeatmapCanvas",
    "JapaneseGrammar",
    "KVCache",
    "MaskExplorer",
    "MultiHeadAttention",
    "MultiHeadExplorer",
    "NextTokenExplorer",
    "ScoreScalingExplorer",
    "SelfAttention",
    "SoftmaxExplorer",
    "WeightedAverageExplorer",
    "Tokenizer",
    "activation_figure",
    "against_dk_figure",
    "attention",
    "attention_heatmap",
    "attention_heatmaps",
    "attention_step_figure",
    "dot_product_geometry_figure",
    "available_devices",
    "causal_mask",
    "check_cache_agrees",
    "check_close",
    "describe_environment",
    "device_name",
    "embedding_figure",
    "kl_divergence",
    "dot_product_variance",
    "figure_to_png",
    "generate",
    "generate_with_cache",
    "generate_without_cache",
    "get_device",
    "head_counts",
    "head_grid_figure",
    "log_likelihood",
    "load_course_model",
    "evaluate_by_rule",
    "sample_sentences",
    "merge_heads",
    "next_token_distribution",
    "one_hot",
    "padding_mask",
    "parameter_breakdown",
    "random_dot_products",
    "row_entropy",
    "scaled_dot_product_attention",
    "seed_everything",
    "set_language",
    "language",
    "shape_flow_figure",
    "show_figure",
    "split_heads",
    "teacher_forcing_figure",
    "weighted_average_figure",
    "similarity_scores",
    "softmax",
]
