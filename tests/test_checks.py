import pytest
import torch

from nbhelpers import check_close


def test_prints_what_was_compared_and_the_error(capsys):
    check_close("ones vs ones", torch.ones(3).double(), torch.ones(3).double() + 1e-8)
    out = capsys.readouterr().out
    assert out.startswith("OK  ones vs ones: max |error| = 1.0e-08")


def test_fails_beyond_tolerance():
    with pytest.raises(AssertionError, match="exceeds"):
        check_close("far", torch.zeros(2), torch.ones(2))


def test_nan_never_passes():
    with pytest.raises(AssertionError):
        check_close("nan", torch.tensor([float("nan")]), torch.tensor([0.0]))


def test_shape_mismatch_is_named():
    with pytest.raises(ValueError, match=r"ours \(2,\) vs reference \(3,\)"):
        check_close("shapes", torch.zeros(2), torch.zeros(3))
