import random

import numpy as np
import pytest
import torch

from nbhelpers import seed_everything


def test_same_seed_same_draws():
    draws = []
    for _ in range(2):
        generator = seed_everything(7)
        draws.append(
            (random.random(), np.random.rand(), torch.rand(3), torch.rand(2, generator=generator))
        )
    (a, b, c, d), (a2, b2, c2, d2) = draws
    assert a == a2 and b == b2
    assert torch.equal(c, c2) and torch.equal(d, d2)


def test_another_seed_other_draws():
    draws = []
    for seed in (7, 8):
        generator = seed_everything(seed)
        draws.append(
            (random.random(), np.random.rand(), torch.rand(3), torch.rand(2, generator=generator))
        )
    (a, b, c, d), (a2, b2, c2, d2) = draws
    assert a != a2 and b != b2
    assert not torch.equal(c, c2) and not torch.equal(d, d2)


@pytest.mark.parametrize("bad", [-1, 2**32, 1.5, "3", True])
def test_bad_seed_is_named(bad):
    with pytest.raises((TypeError, ValueError), match="seed"):
        seed_everything(bad)
