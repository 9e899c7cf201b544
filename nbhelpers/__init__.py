"""nbhelpers: the support package of the attention and GPT-1 course.

Layers, each importing only from the ones below it:

* `support/`: argument checks, device, seeding, check_close, threads, benchmarking, and the
  language of the course's own words (`set_language("ja")`);
* the formulas, in notebook order: attention, masks, multihead, gpt1, inference, kv_cache,
  statistics, memory, fine_tuning, and the generated corpus with its BPE and labelled tasks
  (`corpus/`); they import no plotting;
* `experiments/`: the notebooks' runs that train or measure a model (05's heads, 07's deep
  stacks, 08's training, the stored course model, 11's fine-tuning);
* `figures/`: pure figure builders and the canvases that redraw them;
* `widgets/`: the explorers, wiring controls to a formula and a figure;
* `exercises/`: the checkers of the notebooks' exercises.

`import nbhelpers` loads nothing but this file: each name below is imported on first use
(PEP 562), so a notebook that only computes never loads matplotlib or ipywidgets. Figures
draw Japanese with IPAexGothic (matplotlib-fontja), set up when `figures` is first used.
"""

from __future__ import annotations

import importlib

# The function `attention` shares its name with its module: bound here, before any import of
# the submodule nbhelpers.attention could set the package's attribute to the module. The
# module imports torch and support/ only.
from .attention import attention  # noqa: F401  (in __all__)

# module -> the names it defines that the package offers at its top level
_MODULES = {
    "attention": ["SelfAttention", "scaled_dot_product_attention", "similarity_scores", "softmax"],
    "corpus": ["JapaneseGrammar", "Tokenizer"],
    "example": ["running_example"],
    "fine_tuning": ["GPT1Classifier"],
    "figures.tour": ["course_model_ablation"],  # prints tables: not a figure builder
    "figures": [
        "AttentionStepCanvas",
        "EmbeddingCanvas",
        "HeadGridCanvas",
        "HeatmapCanvas",
        "activation_figure",
        "against_dk_figure",
        "attention_heatmap",
        "attention_heatmaps",
        "attention_step_figure",
        "course_model_tour",
        "dot_product_geometry_figure",
        "embedding_figure",
        "figure_to_png",
        "head_grid_figure",
        "shape_flow_figure",
        "show_figure",
        "teacher_forcing_figure",
        "weighted_average_figure",
    ],
    "gpt1": ["GPT1", "GPT1Block", "GPT1Config", "one_hot", "parameter_breakdown"],
    "inference": [
        "check_cache_agrees",
        "generate",
        "generate_with_cache",
        "generate_without_cache",
        "log_likelihood",
        "next_token_distribution",
    ],
    "kv_cache": ["KVCache"],
    "masks": ["causal_mask", "padding_mask"],
    "multihead": ["MultiHeadAttention", "head_counts", "merge_heads", "split_heads"],
    "statistics": ["dot_product_variance", "kl_divergence", "random_dot_products", "row_entropy"],
    "support.checks": ["check_close"],
    "support.device": ["available_devices", "describe_environment", "device_name", "get_device"],
    "support.language": ["language", "set_language"],
    "support.tables": ["table"],
    "support.seeding": ["seed_everything"],
    "experiments.heldout": ["evaluate", "evaluate_by_rule", "make_heldout"],
    "experiments.pretraining": ["corpus_model_config", "train"],
    "experiments.sampling": ["sample_sentences"],
    "experiments.course_model": ["load_course_model", "load_course_run"],
    "widgets": [
        "AttentionExplorer",
        "AttentionMatrixExplorer",
        "AttentionMemoryExplorer",
        "BPEExplorer",
        "BrowserHeatmap",
        "CausalityExplorer",
        "ConvergenceExplorer",
        "DotProductGeometryExplorer",
        "EmbeddingExplorer",
        "FigureExplorer",
        "FineTuningCurvesExplorer",
        "MaskExplorer",
        "MultiHeadExplorer",
        "NextTokenExplorer",
        "ScoreScalingExplorer",
        "SoftmaxExplorer",
        "TaskInputExplorer",
        "WeightedAverageExplorer",
    ],
}
_EXPORTS = {name: module for module, names in _MODULES.items() for name in names}
_SUBPACKAGES = {"corpus", "exercises", "experiments", "figures", "support", "widgets"}

__all__ = sorted([*_EXPORTS, "attention"])


def __getattr__(name: str):
    if name in _EXPORTS:
        value = getattr(importlib.import_module(f"{__name__}.{_EXPORTS[name]}"), name)
        globals()[name] = value  # the next look-up is an ordinary attribute
        return value
    try:
        return importlib.import_module(f"{__name__}.{name}")  # nbhelpers.attention, ...
    except ModuleNotFoundError as error:
        if error.name != f"{__name__}.{name}":
            raise
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted({*globals(), *_EXPORTS, *_SUBPACKAGES})
