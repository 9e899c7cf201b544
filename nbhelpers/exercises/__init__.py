"""Exercises with checkers: the learner writes a formula, `check_<exercise>(answer)` runs it
on seeded cases built to expose the usual mistakes, compares it with an independent torch
reference, and reports which case failed, the shapes, the largest error and a hint that
names the likely mistake. A checker never raises because an answer is wrong.

    result = check_log_softmax(my_log_softmax)   # shows the report in a notebook
    bool(result), result.status          # True only if every case passed; "passed", ...
"""

from .at_scale import check_cached_causal_mask, check_cached_generate, check_merge_partials
from .bpe import check_bpe_encode, check_merge_step
from .capstone import Parts, train_your_gpt1, use_parts
from .core import FAILED, NOT_ATTEMPTED, PASSED, CheckResult
from .embeddings import check_decode_embedding, check_embed
from .fine_tuning import check_fine_tuning_loop, check_fine_tuning_loss, check_task_head
from .fine_tuning_capstone import fine_tune_yours
from .masked_attention import check_causality_test, check_left_padded_mask
from .multi_head import check_causal_multi_head, check_grouped_query_attention
from .next_token import check_beam_search, check_sample_next_token, check_top_p_filter
from .self_attention import check_attention, check_attention_entropy, check_verb_output
from .similarity_scores import check_projections, check_similarity_scores
from .softmax import check_log_softmax, check_softmax_backward
from .tour import check_normalised_rows
from .training import check_accumulated_step, check_log_likelihood
from .transformer_block import check_gpt1_block, check_gpt1_forward, check_parameter_count

__all__ = [
    "FAILED",
    "NOT_ATTEMPTED",
    "PASSED",
    "CheckResult",
    "Parts",
    "check_accumulated_step",
    "check_attention",
    "check_bpe_encode",
    "check_fine_tuning_loop",
    "check_fine_tuning_loss",
    "check_merge_step",
    "check_task_head",
    "check_attention_entropy",
    "check_cached_generate",
    "check_cached_causal_mask",
    "check_causal_multi_head",
    "check_causality_test",
    "check_decode_embedding",
    "check_embed",
    "check_gpt1_block",
    "check_gpt1_forward",
    "check_beam_search",
    "check_grouped_query_attention",
    "check_left_padded_mask",
    "check_log_likelihood",
    "check_log_softmax",
    "check_merge_partials",
    "check_normalised_rows",
    "check_parameter_count",
    "check_sample_next_token",
    "check_projections",
    "check_similarity_scores",
    "check_softmax_backward",
    "check_top_p_filter",
    "check_verb_output",
    "fine_tune_yours",
    "train_your_gpt1",
    "use_parts",
]
