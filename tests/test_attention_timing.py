"""Notebook 10's timing of the attention paths: every contender computes the same attention,
the lengths stop at the budget, and bad arguments are named."""

import pytest
import torch
import torch.nn.functional as F

from nbhelpers.experiments.attention_timing import KERNELS, contenders, kernel_call, time_attention


def test_every_contender_computes_the_same_attention():
    Q, K, V = (
        torch.randn(1, 2, 16, 8, generator=torch.Generator().manual_seed(i)) for i in range(3)
    )
    reference = F.scaled_dot_product_attention(Q, K, V)
    found = contenders(Q, K, V)
    assert {"(a) from scratch", "(b) nbhelpers fast path", "(c) sdpa[math]"} <= set(found)
    for name, fn in found.items():
        assert torch.allclose(fn(), reference, atol=1e-5), name


def test_a_kernel_that_cannot_run_is_none():
    Q = torch.randn(1, 1, 4, 8)
    assert kernel_call(KERNELS["math"], Q, Q, Q) is not None
    assert kernel_call(KERNELS["flash"], Q.double(), Q.double(), Q.double(), dropout_p=2.0) is None


def test_lengths_stop_at_the_budget_and_every_line_is_reported():
    lines = []
    results = time_attention([8, 16, 4096], budget_s=1e-9, report=lines.append)
    assert results["(a) from scratch"]["n"] == [8]  # the next length would overrun the budget
    assert any(line.startswith("stopped after n = 8: n = 16") for line in lines)
    row = results["(b) nbhelpers fast path"]
    assert len(row["seconds"]) == len(row["bytes"]) == 1 and row["seconds"][0] > 0


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"lengths": [0]}, "lengths must be a positive int"),
        ({"lengths": [8], "heads": 0}, "heads must be a positive int"),
        ({"lengths": [8], "budget_s": 0}, "budget_s must be a positive number of seconds"),
    ],
)
def test_bad_arguments_are_named(kwargs, message):
    with pytest.raises(ValueError, match=message):
        time_attention(**kwargs)
