import pytest
import torch

from nbhelpers import check_close


def test_prints_what_was_compared_and_the_error(capsys):
    check_close("ones vs ones", torch.ones(3).double(), torch.ones(3).double() + 1e-8)
    out = capsys.readouterr().out
    assert out.startswith("OK  ones vs ones: max error 1.0e-08 (tolerance 1e-06, shape (3,))")


def test_fails_beyond_tolerance():
    with pytest.raises(AssertionError, match="exceeds"):
        check_close("far", torch.zeros(2), torch.ones(2))


def test_nan_never_passes():
    with pytest.raises(AssertionError):
        check_close("nan", torch.tensor([float("nan")]), torch.tensor([0.0]))


def test_shape_mismatch_is_named():
    with pytest.raises(ValueError, match=r"ours \(2,\) vs reference \(3,\)"):
        check_close("shapes", torch.zeros(2), torch.zeros(3))


def sanitized(text):
    from notebook_tools import sanitize_patterns

    for regex, replacement in sanitize_patterns():
        text = regex.sub(replacement, text)
    return text


@pytest.mark.parametrize("code", ["en", "ja"])
def test_the_error_figure_is_sanitized_in_every_language(capsys, code):
    # Two machines that differ in the last bits must store the same check line.
    from nbhelpers.support import language

    try:
        language.set_language(code)
        ones = torch.ones(3, dtype=torch.float64)
        check_close("a", ones, ones + 3e-8)
        check_close("a", ones, ones + 6e-8)
        first, second = capsys.readouterr().out.splitlines()
    finally:
        language.set_language(None)
    assert first != second
    assert sanitized(first) == sanitized(second)
    assert "ERROR" in sanitized(first) and "|error|" not in first
    assert "e-08" not in sanitized(first)
    assert sanitized(first).endswith(first[first.index("e-08") + 4 :])  # the rest is kept


def test_equal_infinities_are_equal(capsys):
    # Masked scores hold -inf on both sides: the same value, no error (inf - inf is NaN).
    masked = torch.tensor([[0.5, float("-inf")], [0.25, 1.0]])
    check_close("masked scores", masked, masked.clone())
    assert "max error 0.0e+00" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("ours", "reference"),
    [(float("-inf"), float("inf")), (float("-inf"), 0.0), (0.0, float("inf"))],
)
def test_an_infinity_against_anything_else_fails(ours, reference):
    with pytest.raises(AssertionError, match="exceeds"):
        check_close("inf", torch.tensor([1.0, ours]), torch.tensor([1.0, reference]))


@pytest.mark.parametrize("reference", [float("nan"), 0.0, float("-inf")])
def test_nan_fails_and_says_nan(capsys, reference):
    with pytest.raises(AssertionError, match="nan"):
        check_close("nan", torch.tensor([float("nan")]), torch.tensor([reference]))
    assert "max error nan (" in capsys.readouterr().out


def test_nbval_finds_the_figure_where_check_close_puts_it():
    from nbhelpers.support.checks import ERROR_FIGURE_PATTERN
    from notebook_tools import sanitize_patterns

    assert ERROR_FIGURE_PATTERN in [regex.pattern for regex, _ in sanitize_patterns()]
