"""Independent references the checkers and the tests share: torch's own functions and modules
wherever torch has one; where it has none, the docstring says so."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

from ..support.language import tr
from .core import *  # noqa: F403 (the checkers' toolkit: core.__all__)


def reference_attention(Q, K, V, mask=None):
    """(output, weights) from torch: F.scaled_dot_product_attention and F.softmax."""
    scores = Q @ K.mT / math.sqrt(Q.shape[-1]) + (0 if mask is None else mask)
    weights = F.softmax(scores, dim=-1)
    output = F.scaled_dot_product_attention(Q, K, V, attn_mask=mask)
    return output, weights


def block_parts(block: nn.Module):
    attn = getattr(block, "attn", None)
    if attn is None:
        raise AttributeError(
            tr("{block_type} needs an attribute attn", block_type=type(block).__name__)
        )
    W = linear_weights(attn, "W_Q", "W_K", "W_V", "W_O")
    norms = []
    for name in ("ln_1", "ln_2"):
        norm = getattr(block, name, None)
        if not isinstance(norm, nn.LayerNorm):
            raise AttributeError(
                tr(
                    "{block_type} needs {name}, an nn.LayerNorm",
                    block_type=type(block).__name__,
                    name=name,
                )
            )
        norms.append(norm)
    ffn = getattr(block, "ffn", None)
    if not (isinstance(ffn, nn.Sequential) and len(ffn) == 3):
        raise AttributeError(
            tr(
                "{block_type} needs ffn = nn.Sequential(nn.Linear, nn.GELU, nn.Linear)",
                block_type=type(block).__name__,
            )
        )
    return W, norms, ffn


def gpt1_gelu(x: torch.Tensor) -> torch.Tensor:
    """GPT-1's activation: GELU in its tanh approximation, as in GPT-1's released code."""
    return F.gelu(x, approximate="tanh")


def reference_layer(
    block,
    n_heads: int,
    *,
    activation=gpt1_gelu,
    swap_norms: bool = False,
    norm_first: bool = False,
) -> nn.TransformerEncoderLayer:
    """torch's encoder layer holding a GPT1Block's weights, post-LN (GPT-1) or, with
    norm_first, pre-LN (GPT-2): with a causal mask it is the same block, computed by torch's
    own code. Its activation is GPT-1's tanh GELU, whatever the block holds, so that a block
    with another one fails; `activation` and `swap_norms` make the usual mistakes."""
    W, (ln_1, ln_2), ffn = block_parts(block)
    if swap_norms:
        ln_1, ln_2 = ln_2, ln_1
    d_model, d_ff = ffn[0].in_features, ffn[0].out_features
    reference = nn.TransformerEncoderLayer(
        d_model,
        n_heads,
        dim_feedforward=d_ff,
        dropout=0.0,
        activation=activation,
        batch_first=True,
        norm_first=norm_first,
    )
    qkv = [W[k] for k in ("W_Q", "W_K", "W_V")]
    with torch.no_grad():
        reference.self_attn.in_proj_weight.copy_(torch.cat([layer.weight for layer in qkv]))
        reference.self_attn.in_proj_bias.copy_(torch.cat([bias_of(layer) for layer in qkv]))
        reference.self_attn.out_proj.load_state_dict(W["W_O"].state_dict())
        reference.linear1.load_state_dict(ffn[0].state_dict())
        reference.linear2.load_state_dict(ffn[2].state_dict())
        reference.norm1.load_state_dict(ln_1.state_dict())
        reference.norm2.load_state_dict(ln_2.state_dict())
    return reference.eval()


class PlainSGD:
    """p <- p - lr · ∂loss/∂p, with the zero_grad() and step() of a torch optimiser.

    torch.optim.SGD would do the same (tests/test_exercises.py compares them), but its first
    step loads torch's compiler stack, seconds on a laptop; a checker must answer in one."""

    def __init__(self, parameters, lr: float):
        self.parameters, self.lr = list(parameters), lr

    def zero_grad(self, set_to_none: bool = True) -> None:
        for p in self.parameters:
            if set_to_none:
                p.grad = None
            elif p.grad is not None:
                p.grad.zero_()

    @torch.no_grad()
    def step(self) -> None:
        for p in self.parameters:
            if p.grad is not None:
                p.add_(p.grad, alpha=-self.lr)


def partial_of(Q, K, V):
    """What one block of keys leaves behind: the maximum score m (..., n, 1), the sum
    l = Σ exp(s - m) (..., n, 1) and the unnormalised output acc = Σ exp(s - m) v
    (..., n, d_v). torch has no such function: these are the inputs of the merge exercise,
    whose answer the checker compares with F.scaled_dot_product_attention and
    torch.logsumexp over all the keys. An empty block (all -inf) gives m = -inf, l = 0,
    acc = 0."""
    s = Q @ K.mT / math.sqrt(Q.shape[-1])
    m = s.amax(-1, keepdim=True)
    safe = torch.where(torch.isneginf(m), torch.zeros_like(m), m)
    e = torch.exp(s - safe)
    return m, e.sum(-1, keepdim=True), e @ V


def filtered_distribution(logits, temperature, top_k):
    """The exact distribution the sampler must draw from: softmax(logits / T) over the top k,
    from torch's topk and F.softmax (torch has no sampling filter of its own)."""
    scaled = logits / temperature
    if top_k is not None:
        kth = scaled.topk(top_k).values[-1]
        scaled = scaled.masked_fill(scaled < kth, -math.inf)
    return F.softmax(scaled, dim=-1)
