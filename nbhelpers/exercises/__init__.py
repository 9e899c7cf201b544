"""Exercises with checkers: the learner writes a formula, `check_<exercise>(answer)` runs it
on seeded cases built to expose the usual mistakes, compares it with an independent torch
reference, and reports which case failed, the shapes, the largest error and a hint that
names the likely mistake. A checker never raises because an answer is wrong.

    result = check_softmax(softmax)      # shows the report in a notebook
    bool(result), result.status          # True only if every case passed; "passed", ...
"""

from .attention import (
    check_attention,
    check_causal_mask,
    check_masked_attention,
    check_merge_heads,
    check_multi_head_attention,
    check_self_attention,
    check_similarity_scores,
    check_softmax,
    check_split_heads,
)
from .core import FAILED, NOT_ATTEMPTED, PASSED, CheckResult
from .gpt import (
    check_embed,
    check_gpt1_block,
    check_greedy_generate,
    check_layer_norm,
    check_log_likelihood,
    check_one_hot,
    check_sample_next_token,
)
from .scale import check_cached_attention_step, check_online_softmax_attention

__all__ = [
    "FAILED",
    "NOT_ATTEMPTED",
    "PASSED",
    "CheckResult",
    "check_attention",
    "check_cached_attention_step",
    "check_causal_mask",
    "check_embed",
    "check_gpt1_block",
    "check_greedy_generate",
    "check_layer_norm",
    "check_log_likelihood",
    "check_masked_attention",
    "check_merge_heads",
    "check_multi_head_attention",
    "check_one_hot",
    "check_online_softmax_attention",
    "check_sample_next_token",
    "check_self_attention",
    "check_similarity_scores",
    "check_softmax",
    "check_split_heads",
]
