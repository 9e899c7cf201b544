"""The capstone (notebook 08): the learner's parts from notebooks 05, 07 and 08, assembled
into a GPT-1 and trained on the course grammar, with a verdict that names what it sees."""

from __future__ import annotations

import pytest
import torch.nn.functional as F
from capstone_diagnoses import BROKEN  # noqa: E402

from answers import skeleton_function, solved
from answers.nb05 import fused_class
from nbhelpers.exercises import NOT_ATTEMPTED


@pytest.fixture(scope="module", name="solved")
def solved_fixture():
    return solved()


def test_use_parts_keeps_a_part_that_passes_and_replaces_one_that_does_not(solved):
    from nbhelpers.exercises import use_parts
    from nbhelpers.exercises.training import accumulated_step

    parts = use_parts(attention=solved["MyCausalMultiHead"], step=skeleton_function)
    assert parts.attention is solved["MyCausalMultiHead"]
    assert parts.step is accumulated_step  # not attempted: nbhelpers' own
    assert parts.yours == ["attention"]
    assert "not passed its checker yet" in repr(parts)


def test_the_capstone_without_any_part_of_yours_is_not_attempted():
    from nbhelpers.exercises import train_your_gpt1, use_parts

    result = train_your_gpt1(use_parts())
    assert result.status == NOT_ATTEMPTED and not result


# The worked parts reaching the goal, and a model without its causal mask named as one that
# sees the future, are asserted where a learner reads them: solutions/08 (its cells
# `assert result and result.kl <= 0.05` and `broken.fault == "sees the future"`), which
# nbval runs in both languages. Here, what no notebook shows.


def unshifted(model, optimizer, ids, pad_id, micro_batch):
    """A training step that scores each position on the token it reads."""
    optimizer.zero_grad()
    loss = F.cross_entropy(model(ids).flatten(0, 1), ids.flatten(), ignore_index=pad_id)
    loss.backward()
    optimizer.step()
    return loss.item()


@pytest.mark.slow
def test_the_capstone_names_a_model_that_reads_its_targets():
    from nbhelpers.exercises import train_your_gpt1, use_parts

    result = train_your_gpt1(
        use_parts(step=unshifted, checked=False), steps=200, seconds=float("inf")
    )
    assert result.fault == "targets not shifted", result


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"steps": 0}, "steps must be a positive int"),
        ({"seconds": -1}, "seconds must be a positive number"),
        ({"goal": "0.05"}, "goal must be a positive number"),
    ],
)
def test_the_capstone_names_a_bad_setting(settings, message):
    from nbhelpers.exercises import train_your_gpt1, use_parts

    with pytest.raises(ValueError, match=message):
        train_your_gpt1(use_parts(), **settings)
    with pytest.raises(TypeError, match="parts must come from use_parts"):
        train_your_gpt1(None)


@pytest.mark.parametrize("row", [r for r in BROKEN if r.before], ids=lambda r: f"{r.part}-{r.how}")
def test_the_capstone_says_what_it_sees_before_training(row):
    """A part that raises, or a forward pass that returns no gradient, probabilities or the
    wrong shape, is named before any training: no traceback, only the learner's part blamed."""
    from nbhelpers.exercises import train_your_gpt1, use_parts

    result = train_your_gpt1(use_parts(**row.given, checked=False), steps=5)
    assert not result and result.fault == row.fault, result
    report = repr(result)
    named = {
        "attention": "attention",
        "block": "block",
        "forward": "forward pass",
        "step": "training step",
    }
    for part, words in named.items():
        if part != row.part:
            assert f"your {words}" not in report, report  # only the broken part is named


def test_time_running_out_is_not_a_fault(solved):
    from nbhelpers.exercises import train_your_gpt1, use_parts

    parts = use_parts(step=solved["my_accumulated_step"])
    result = train_your_gpt1(parts, seconds=0.5)
    assert not result and result.fault == "time ran out", result
    assert "train_your_gpt1(parts, seconds=" in repr(result)
    assert "hint:" not in repr(result)  # nothing of the learner's is blamed


def test_the_learners_attention_answers_each_block_as_its_own_did():
    """A block built around an attention that returns (output, weights), and that unpacks
    it (`self.attn(h)[0]`), gets the learner's attention in the capstone with the same
    answer: [0] must not pick the first sentence of the batch instead."""
    import torch

    from answers.nb07 import block_class
    from nbhelpers.corpus import JapaneseGrammar
    from nbhelpers.exercises import use_parts
    from nbhelpers.experiments.pretraining import corpus_model_config

    fused = fused_class()

    class UnpackingBlock(block_class()):
        def __init__(self, d_model, n_heads, d_ff):
            super().__init__(d_model, n_heads, d_ff)
            self.attn = fused(d_model, n_heads)

        def forward(self, h):
            g = self.ln_1(h + self.attn(h)[0])
            return self.ln_2(g + self.ffn(g))

    parts = use_parts(attention=fused, block=UnpackingBlock, checked=False)
    model = parts.model(corpus_model_config(JapaneseGrammar()))
    block = model.blocks[0].block
    h = torch.randn(3, 5, model.config.d_model)
    assert isinstance(block.attn(h), tuple)
    torch.testing.assert_close(block(h)[1], block(h[1:2])[0])  # each sentence on its own


def test_nbhelpers_own_block_raising_on_the_learners_attention_blames_the_attention():
    """The learner's attention returns the wrong width; nbhelpers' own block raises when it
    adds it to h. The verdict names nbhelpers' block as what raised and the learner's
    attention as what it raised on, never "your block"."""
    import torch
    from torch import nn

    from nbhelpers.exercises import train_your_gpt1, use_parts

    class HalfWidth(nn.Module):
        def __init__(self, d_model, n_heads):
            super().__init__()
            self.proj = nn.Linear(d_model, d_model // 2)

        def forward(self, x):
            return self.proj(x), None

    result = train_your_gpt1(use_parts(attention=HalfWidth, checked=False), steps=1)
    said = repr(result)
    assert not result and result.fault == "raised", said
    assert "nbhelpers' own block raised" in said and "your attention gave it" in said, said
    assert "your block" not in said, said
    assert "your attention fails its checker" in said, said  # checked=False: its checker's say
    assert torch.is_grad_enabled()
