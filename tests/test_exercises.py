"""Every checker passes the worked solution and correct answers in other styles, rejects
each usual mistake in the table (tests/answers/, one module per notebook) with the words
that name it, says "not attempted" without giving the answer away, never raises for the
learner's bug, and leaves the learner's state as it was."""

from __future__ import annotations

import pytest
import torch

from answers import Says, SkeletonModule, all_exercises, skeleton, skeleton_function, solved
from answers.nb03 import attention_with
from answers.nb04 import left_padded
from answers.nb09 import sampler
from nbhelpers.exercises import (
    FAILED,
    NOT_ATTEMPTED,
    PASSED,
    check_attention,
    check_left_padded_mask,
    check_projections,
    check_sample_next_token,
)

EXERCISES = all_exercises()
IDS = [e.name for e in EXERCISES]
MISTAKES = [(e, answer, words) for e in EXERCISES for answer, words in e.mistakes]
MISTAKE_IDS = [f"{e.name}-{words}" for e, _, words in MISTAKES]
STYLES = [(e, answer) for e in EXERCISES for answer in e.other_styles]
# What a formula or a solution looks like in a sentence.
GIVE_AWAYS = ("=", "√", "Σ", "⊙", "ᵀ", " / ", " - ", " + ", "softmax(", "logsumexp", "exp(", "@")


@pytest.fixture(scope="module", name="solved")
def solved_fixture():
    return solved()


@pytest.mark.parametrize("exercise", EXERCISES, ids=IDS)
def test_the_worked_solution_passes(exercise, solved):
    result = exercise.checker(solved[exercise.solution])
    assert result.status == PASSED and bool(result), repr(result)
    assert repr(result).startswith("✓")


@pytest.mark.parametrize(("exercise", "answer"), STYLES, ids=[e.name for e, _ in STYLES])
def test_a_correct_answer_in_another_style_passes(exercise, answer):
    result = exercise.checker(answer)
    assert result.status == PASSED, repr(result)


@pytest.mark.parametrize(("exercise", "answer", "words"), MISTAKES, ids=MISTAKE_IDS)
def test_each_usual_mistake_is_rejected_with_the_words_that_name_it(exercise, answer, words):
    result = exercise.checker(answer)
    report = repr(result)
    assert result.status == FAILED and not bool(result), report
    assert words in report, report
    if not isinstance(words, Says):
        assert "hint:" in report, report
        assert report.index("hint:") < report.index(words), report


@pytest.mark.parametrize("exercise", EXERCISES, ids=IDS)
def test_the_skeleton_is_not_attempted_in_one_line(exercise):
    result = exercise.checker(skeleton(exercise))
    assert result.status == NOT_ATTEMPTED and not bool(result)
    report = repr(result)
    assert len(report.splitlines()) == 1
    assert "not attempted. Replace raise NotImplementedError" in report
    # It states the task, never the answer: no formula, no function that solves it.
    task = report.split("NotImplementedError:", 1)[1]
    given_away = [s for s in GIVE_AWAYS if s in task]
    assert not given_away, f"the not-attempted message gives {given_away} away: {report}"


@pytest.mark.parametrize("exercise", EXERCISES, ids=IDS)
def test_an_answer_that_raises_fails_without_raising(exercise):
    def broken(*args, **kwargs):
        raise IndexError("index 7 is out of bounds\nsecond line of the trace")

    class Broken(torch.nn.Module):
        def __init__(self, *args):
            super().__init__()
            raise IndexError("index 7 is out of bounds\nsecond line of the trace")

    result = exercise.checker(Broken if exercise.is_class else broken)
    assert result.status == FAILED
    report = repr(result)
    assert "case 1 of" in report and "IndexError: index 7 is out of bounds" in report
    assert "second line" not in report


@pytest.mark.parametrize("exercise", EXERCISES, ids=IDS)
def test_the_wrong_kind_of_answer_is_reported_naming_the_argument(exercise):
    """A function where a class is asked for, an instance, a value: a failed report that says
    what was expected, never a traceback."""
    instance = torch.nn.Linear(2, 2) if exercise.is_class else None  # a module, not its class
    for wrong_kind in (skeleton_function if exercise.is_class else SkeletonModule, 42, instance):
        if wrong_kind is None:
            continue
        result = exercise.checker(wrong_kind)
        report = repr(result)
        assert result.status == FAILED and not bool(result), report
        assert ("must be a class" if exercise.is_class else "must be a function") in report
        assert ("cls" if exercise.is_class else "fn") in report and len(report.splitlines()) == 1


def test_reports_are_stable_from_run_to_run():
    wrong = attention_with(scale=None)
    assert repr(check_attention(wrong)) == repr(check_attention(wrong))
    assert repr(check_sample_next_token(sampler(use_top_k=False))) == repr(
        check_sample_next_token(sampler(use_top_k=False))
    )


def test_a_wrong_matrix_is_drawn_under_the_report(solved):
    """A front end shows only a bundle's richest type: the HTML carries the report as text
    and the picture under it, so neither is lost (text/plain is the same report)."""
    from html.parser import HTMLParser

    wrong = check_left_padded_mask(lambda lengths, n: left_padded(lengths, n, side="right"))
    bundle = wrong._repr_mimebundle_()
    assert set(bundle) == {"text/plain", "text/html"}
    assert bundle["text/plain"] == repr(wrong)

    class Page(HTMLParser):
        text, images = "", []

        def handle_data(self, data):
            self.text += data

        def handle_starttag(self, tag, attrs):
            if tag == "img":
                self.images.append(dict(attrs))

    page = Page()
    page.feed(bundle["text/html"])
    assert page.text == repr(wrong)  # the words, as text, escaped and unescaped again
    assert "hint:" in page.text
    (image,) = page.images
    assert image["src"].startswith("data:image/png;base64,iVBOR")  # the PNG signature
    assert bundle["text/html"].index("<pre") < bundle["text/html"].index("<img")  # under it
    expected, got = wrong.picture
    assert expected.shape == got.shape == (2, 5, 5)
    right = check_left_padded_mask(solved["my_left_padded_mask"])
    assert "<img" not in right._repr_mimebundle_()["text/html"]
    no_matrix = check_projections(lambda: (torch.zeros(4, 2), torch.zeros(4, 2)))
    assert no_matrix.status == FAILED and "<img" not in no_matrix._repr_mimebundle_()["text/html"]


def test_a_report_with_markup_in_it_is_shown_as_text():
    def markup():
        raise ValueError("<b>not a pair of matrices</b>")

    result = check_projections(markup)
    html = result._repr_mimebundle_()["text/html"]
    assert "<b>" not in html and "&lt;b&gt;" in html


@pytest.mark.parametrize("exercise", EXERCISES, ids=IDS)
def test_a_checker_leaves_the_learners_state_alone(exercise, solved):
    torch.manual_seed(123)
    expected_draw = torch.rand(3)
    torch.manual_seed(123)
    dtype, threads, grad = (
        torch.get_default_dtype(),
        torch.get_num_threads(),
        torch.is_grad_enabled(),
    )
    exercise.checker(solved[exercise.solution])
    assert torch.equal(torch.rand(3), expected_draw), "the checker moved the learner's random state"
    assert torch.get_default_dtype() == dtype
    assert torch.get_num_threads() == threads
    assert torch.is_grad_enabled() == grad


@pytest.mark.parametrize("state", ["no_grad", "float64"])
@pytest.mark.parametrize("exercise", EXERCISES, ids=IDS)
def test_a_right_answer_passes_whatever_the_learner_did_before(exercise, state, solved):
    """A checker sets a known state on entry (gradients on, float32 by default) and gives
    the learner's back: under torch.no_grad() or after set_default_dtype(float64), the worked
    solution still passes and the state is still the learner's."""
    before = torch.get_default_dtype()
    try:
        if state == "no_grad":
            with torch.no_grad():
                result = exercise.checker(solved[exercise.solution])
                assert not torch.is_grad_enabled()
        else:
            torch.set_default_dtype(torch.float64)
            result = exercise.checker(solved[exercise.solution])
            assert torch.get_default_dtype() == torch.float64
    finally:
        torch.set_default_dtype(before)
    assert result.status == PASSED, repr(result)


def test_a_checkers_own_failure_is_not_blamed_on_the_answer():
    import functools

    from nbhelpers.exercises.core import Case, run_cases

    # the case's own computation fails inside torch, with none of the answer's code involved
    broken = Case("c", "inputs", functools.partial(torch.zeros, -1))
    report = repr(run_cases("exercise", lambda: None, [broken], "do it."))
    assert "the checker itself failed, not your answer" in report
    assert "the answer raised" not in report


def test_every_checker_has_its_usual_mistakes_named():
    """The table holds at least five usual mistakes per checker, each rejected with a hint
    (test_each_usual_mistake_is_rejected_with_the_words_that_name_it)."""
    few = {e.name: len(e.mistakes) for e in EXERCISES if len(e.hinted_mistakes) < 5}
    assert not few, f"checkers with fewer than 5 hinted mistakes in tests/answers/: {few}"
