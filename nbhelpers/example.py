"""The course's running example: 犬 / が / 河岸 / を / 歩く, built by hand so that its numbers
mean something.

Each token is a vector of four features, x = (animal, place, particle, action):

    犬   (1,   0,   0, 0)    the dog: an animal
    が   (0.5, 0,   1, 0)    a particle, leaning to the animal it marks
    河岸 (0,   1,   0, 0)    the riverbank: a place
    を   (0,   0.5, 1, 0)    a particle, leaning to the place it marks
    歩く (0,   0,   0, 1)    walks: an action

The projections ask and answer questions about those features:

* a key says what a token is: k = x W_K = (is an animal, is a place);
* a query says what a token looks for: q = x W_Q = (wants an animal, wants a place). The
  verb wants its subject most and its place next, q(歩く) = (4, 3); a particle wants the
  nouns around it, q = (1, 1); nouns ask nothing, q = (0, 0);
* a value is what a token hands over: v = x W_V = (animal, place, particle).

So 歩く's scores are q·k = (4, 2, 3, 1.5, 0) against 犬 が 河岸 を 歩く, and after
softmax(· / √2) it puts about half of its attention on its subject 犬 and a quarter on its
place 河岸: o(歩く) ≈ (0.57, 0.29, 0.21), "my subject is an animal". Every entry is a
multiple of 1/2, so Q Kᵀ is exact in any floating-point format.

Notebooks 00-04.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from .support.language import tr

TOKENS = ("犬", "が", "河岸", "を", "歩く")
FEATURES = ("animal", "place", "particle", "action")
KEY_FEATURES = ("is an animal", "is a place")
VALUE_FEATURES = ("animal", "place", "particle")

_X = [
    [1.0, 0.0, 0.0, 0.0],
    [0.5, 0.0, 1.0, 0.0],
    [0.0, 1.0, 0.0, 0.0],
    [0.0, 0.5, 1.0, 0.0],
    [0.0, 0.0, 0.0, 1.0],
]
_W_Q = [[0.0, 0.0], [0.0, 0.0], [1.0, 1.0], [4.0, 3.0]]  # (d_model, d_k)
_W_K = [[1.0, 0.0], [0.0, 1.0], [0.0, 0.0], [0.0, 0.0]]  # (d_model, d_k)
_W_V = [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0], [0.0, 0.0, 0.0]]  # (d_model, d_v)


@dataclass(frozen=True)
class RunningExample:
    """X (n, d_model) and the projections W_Q, W_K (d_model, d_k) and W_V (d_model, d_v)."""

    tokens: tuple[str, ...]
    X: torch.Tensor
    W_Q: torch.Tensor
    W_K: torch.Tensor
    W_V: torch.Tensor

    @property
    def Q(self) -> torch.Tensor:
        return self.X @ self.W_Q

    @property
    def K(self) -> torch.Tensor:
        return self.X @ self.W_K

    @property
    def V(self) -> torch.Tensor:
        return self.X @ self.W_V


def running_example(
    device: torch.device | str | None = None, dtype: torch.dtype = torch.float32
) -> RunningExample:
    """The hand-built 犬 / が / 河岸 / を / 歩く example, on `device` in `dtype`."""
    if not (isinstance(dtype, torch.dtype) and dtype.is_floating_point):
        raise ValueError(
            tr("dtype must be a floating-point torch.dtype, got {dtype!r}", dtype=dtype)
        )

    def tensor(rows):
        return torch.tensor(rows, dtype=dtype, device=device)

    return RunningExample(TOKENS, tensor(_X), tensor(_W_Q), tensor(_W_K), tensor(_W_V))
