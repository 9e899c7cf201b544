"""The hints a checker guesses from a wrong result when no named mistake matches it: each
relation names what it sees, and none fires on a result it does not describe."""

from __future__ import annotations

import pytest
import torch

from nbhelpers.exercises.core import Case, guessed_hint, run_cases
from nbhelpers.exercises.likely_causes import likely_cause, likely_cause_of_error

g = torch.Generator().manual_seed(0)
E = torch.randn(4, 4, generator=g)
S = torch.randn(3, 5, generator=g)
P = S.softmax(-1)
MASK = torch.full((3, 3), float("-inf")).triu(1)
E64 = torch.randn(3, 4, generator=g, dtype=torch.float64)
INF = float("-inf")

# (what the reference returns, what a wrong answer returned, words its hint must hold)
RELATIONS = [
    (E, -E, "opposite sign"),
    (E, E.mT, "transposed"),
    (E, 2.5 * E, "2.5 times"),
    (E, E + torch.arange(4.0)[:, None], "each row is off by one constant"),
    (P, S.softmax(-2), "sum to 1"),  # softmax over the queries
    (MASK, torch.full((3, 3), INF).triu(2), "query 0 should see keys 0; yours sees 0..1"),
    (MASK, torch.full((3, 3), INF).triu(0), "query 0 should see keys 0; yours sees no key"),
    (MASK, MASK.clamp(min=-1e9), "3 entries should be -inf"),
    (E.abs() + 1, torch.where(E > 1, torch.inf, E.abs() + 1), "infinite where"),
    (E64, E64.float().double() * (1 + 1e-7), "float32's rounding"),
    (E, E + 5e-5, "close, but not exact"),
    (E, E.sum(), "one number where (4, 4) are expected"),
    (E[:3], E[:3].sum(-1), "axis 1 (of 4) is missing"),
    (E, E[:, None], "an extra axis 1 (of 1)"),
    (E, E[:3], "axis 0 holds 3 entries, not 4"),
    (torch.zeros(2, 3), torch.zeros(3, 2) + 1, "its last two axes are swapped"),
    (E, E.tolist(), "not a Python list"),
    (E, 1.5, "not a Python number"),
    (E, None, "returns None"),
    ((E, P), (E, -P), "opposite sign"),  # of a tuple, the wrong value is explained
]


@pytest.mark.parametrize(("expected", "got", "words"), RELATIONS, ids=[r[2] for r in RELATIONS])
def test_a_wrong_result_gets_the_hint_that_describes_it(expected, got, words):
    hint = guessed_hint(expected, got, 1e-5)
    assert hint is not None and words in hint, hint


def test_a_result_no_relation_describes_gets_no_guess():
    assert likely_cause(E, torch.randn(4, 4, generator=g)) is None
    assert likely_cause(torch.arange(4), torch.arange(4).flip(0)) is None  # ids: no guess


ERRORS = [
    (RuntimeError("The size of tensor a (6) must match the size of tensor b (4)"), "keepdim"),
    (ValueError("not enough values to unpack (expected 3, got 2)"), "unpacks a shape"),
    (IndexError("index 7 is out of bounds for dimension 0 with size 7"), "runs past the end"),
    (RuntimeError("Expected target size [4, 11], got [4, 6]"), "classes on axis 1"),
    (RuntimeError("element 0 of tensors does not require grad"), "has no graph"),
]


@pytest.mark.parametrize(("error", "words"), ERRORS, ids=[w for _, w in ERRORS])
def test_an_error_the_answer_raised_gets_the_hint_its_message_suggests(error, words):
    assert words in likely_cause_of_error(error)


def test_a_named_mistake_comes_before_a_guess():
    case = Case("c", "x", lambda answer: answer(), expected=E, mistakes=[("named", 2.5 * E)])
    report = repr(run_cases("exercise", lambda: 2.5 * E, [case], "do it."))
    assert "hint: named" in report and "times" not in report
    report = repr(run_cases("exercise", lambda: -E, [case], "do it."))
    assert "hint: the result has the opposite sign" in report


def test_a_permutation_a_swapped_tuple_and_a_wrong_axis_are_named():
    assert "wrong places" in likely_cause(P, P.sort(-1).values)
    assert "wrong order" in guessed_hint((E, E.T), (E.T, E), 1e-6)
    assert "axis 2 holds 4 entries, not 6" in likely_cause(
        torch.zeros(2, 3, 6), torch.zeros(2, 3, 4)
    )
