"""The inputs the GPT-1 checkers share: the running example's 9-token vocabulary, id batches,
a small seeded GPT1, and the helpers that compare a training step's results."""

from __future__ import annotations

import copy

import torch
from torch import nn

from ..gpt1 import GPT1, GPT1Config
from ..support.language import tr
from .core import *  # noqa: F403 (the checkers' toolkit: core.__all__)

# The running example: <SOS> 犬 が 河岸 を 歩く in a vocabulary of 9 tokens.
VOCAB = ["<PAD>", "<SOS>", "<EOS>", "犬", "猫", "が", "河岸", "を", "歩く"]


SENTENCE = torch.tensor([1, 3, 5, 6, 7, 8])


def id_cases(seed: int):
    g = seeded(seed)
    n_vocab = len(VOCAB)
    return [
        ("<SOS> 犬 が 河岸 を 歩く", SENTENCE, n_vocab),
        (tr("a batch of 3 sentences"), torch.randint(0, n_vocab, (3, 4), generator=g), n_vocab),
        (tr("a repeated token"), torch.tensor([3, 3, 5, 3]), n_vocab),
        (tr("two batch dims, n_vocab = 20"), torch.randint(0, 20, (2, 2, 5), generator=g), 20),
        # a .squeeze() that drops the batch axis passes every case above
        (tr("a batch of one sentence"), torch.randint(0, n_vocab, (1, 4), generator=g), n_vocab),
    ]


def small_model(seed: int, *, n_layers: int = 2, std: float = 0.3) -> GPT1:
    """A GPT1 over the 9-token vocabulary with weights larger than GPT-1's init, so that every
    part (positions, blocks, the tied output) shows in the logits."""
    torch.manual_seed(seed)
    config = GPT1Config(vocab_size=len(VOCAB), n_ctx=8, d_model=16, n_layers=n_layers, n_heads=2)
    model = GPT1(config).eval()
    g = seeded(seed)
    with torch.no_grad():
        for weight in (model.W_e.weight, model.W_p):
            weight.normal_(std=std, generator=g)
    return randomise_constants(model, g)  # LayerNorms' γ, β and the biases, random too


def decoding_model(seed: int, *, vocab_size: int = len(VOCAB), n_layers: int = 1) -> GPT1:
    """A float64 GPT1 (a context of 16) whose every matrix is drawn from N(0, 0.5²), far
    wider than GPT-1's init, so that greedy and beam decoding make varied choices."""
    torch.manual_seed(seed)
    config = GPT1Config(vocab_size=vocab_size, n_ctx=16, d_model=16, n_layers=n_layers, n_heads=2)
    model = GPT1(config).eval().double()
    g = seeded(seed)
    with torch.no_grad():
        for weight in model.parameters():
            if weight.dim() == 2:
                weight.normal_(std=0.5, generator=g)
    return model


def parameters_of(model: nn.Module) -> torch.Tensor:
    return torch.cat([p.detach().flatten() for p in model.parameters()])


def as_loss(loss) -> torch.Tensor:
    """The learner's loss, a float or a 0-d tensor, as a float64 value to compare."""
    if not isinstance(loss, (int, float, torch.Tensor)) or (
        isinstance(loss, torch.Tensor) and loss.numel() != 1
    ):
        raise Rejected(
            tr("the step returned {got}, not the batch's loss", got=describe(loss)),
            tr("return the loss of the whole batch, one number (a 0-d tensor): return loss"),
        )
    value = loss.detach() if isinstance(loss, torch.Tensor) else loss
    return torch.tensor(float(value), dtype=torch.float64)


def with_stale_gradients(model: nn.Module) -> nn.Module:
    """A copy of `model` whose parameters still hold gradients from an earlier step (a deep
    copy drops them), for a missing zero_grad to add in."""
    model = copy.deepcopy(model)
    for p in model.parameters():
        p.grad = torch.full_like(p, 0.01)
    return model
