"""The running example says what its docstring says: 歩く looks for its subject 犬."""

import math

import pytest
import torch
import torch.nn.functional as F

from nbhelpers import running_example


def test_the_verb_attends_to_its_subject_then_its_place():
    example = running_example(dtype=torch.float64)
    scores = example.Q @ example.K.T
    assert scores[4].tolist() == [4.0, 2.0, 3.0, 1.5, 0.0]
    weights = F.softmax(scores / math.sqrt(2), dim=-1)  # an independent reference
    walk = weights[4]
    assert walk.argmax() == 0 and walk.topk(2).indices.tolist() == [0, 2]  # 犬, then 河岸
    assert walk[0] == pytest.approx(0.509, abs=1e-3)
    assert walk[2] == pytest.approx(0.251, abs=1e-3)
    output = F.scaled_dot_product_attention(example.Q, example.K, example.V)
    assert output[4].tolist() == pytest.approx([0.570, 0.294, 0.210], abs=1e-3)


def test_queries_and_keys_differ_so_scores_are_not_symmetric():
    example = running_example()
    assert not torch.equal(example.W_Q, example.W_K)
    scores = example.Q @ example.K.T
    assert scores[4, 0] == 4 and scores[0, 4] == 0  # 歩く seeks 犬; 犬 seeks nothing
    plain = example.X @ example.X.T
    assert torch.equal(plain, plain.T)


def test_every_entry_is_a_multiple_of_a_half_so_products_are_exact():
    example = running_example(dtype=torch.float16)
    for name in ("X", "W_Q", "W_K", "W_V"):
        values = getattr(example, name)
        assert torch.equal(values * 2, (values * 2).round()), name
    exact = running_example(dtype=torch.float64)
    assert torch.equal((example.Q @ example.K.T).double(), exact.Q @ exact.K.T)


def test_shapes_and_bad_dtype():
    example = running_example()
    assert example.X.shape == (5, 4) and example.Q.shape == (5, 2) and example.V.shape == (5, 3)
    assert example.tokens == ("犬", "が", "河岸", "を", "歩く")
    with pytest.raises(ValueError, match="dtype must be a floating-point"):
        running_example(dtype=torch.int64)
