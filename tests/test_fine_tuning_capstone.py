"""Notebook 11's capstone (fine_tune_yours): the worked solutions fine-tune the course model
past the goal, a broken part is named and replaced, and nothing of the learner's trains
nothing."""

from __future__ import annotations

import pytest

from answers import solved
from answers.nb11 import head_class
from nbhelpers.exercises import FAILED, NOT_ATTEMPTED, PASSED, fine_tune_yours
from nbhelpers.exercises.fine_tuning_capstone import GOALS


@pytest.fixture(scope="module")
def parts():
    names = solved()
    return dict(head=names["MyTaskHead"], loss=names["my_fine_tuning_loss"],
                loop=names["my_fine_tuning_loop"])  # fmt: skip


@pytest.mark.slow  # a fine-tuning run of 300 steps
def test_the_solutions_reach_the_goal(parts):
    result = fine_tune_yours(**parts)
    assert result.status == PASSED and result.yours == ["head", "loss", "loop"]
    assert result.accuracy >= GOALS["grammaticality"], repr(result)


@pytest.mark.slow
def test_a_broken_part_is_named_and_replaced(parts):
    result = fine_tune_yours(**{**parts, "head": head_class(read="last")})
    report = repr(result)
    assert result.status == FAILED and result.yours == ["loss", "loop"]
    assert "the last position is read" in report
    assert "with nbhelpers' own classifier head (part 1)" in report
    assert result.accuracy >= GOALS["grammaticality"]  # nbhelpers' head did the work


def test_nothing_given_trains_nothing():
    result = fine_tune_yours()
    assert result.status == NOT_ATTEMPTED and result.accuracy is None
    assert "nothing of yours has passed its checker yet" in repr(result)
    with pytest.raises(ValueError, match="task must be one of"):
        fine_tune_yours(task="translation")
