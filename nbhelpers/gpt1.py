"""The GPT-1 decoder: embeddings, a stack of post-LN blocks, and tied output weights.

    h_0 = U W_e + W_p                      (U: one-hot rows of the tokens; a lookup in practice)
    h_l = block(h_{l-1}),  l = 1 .. n
    P(u) = softmax(h_L W_eᵀ)               (the output matrix *is* the embedding matrix)

A block is masked multi-head self-attention and a position-wise feed-forward layer, each
followed by a residual connection and then LayerNorm (post-LN, as in GPT-1).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace

import torch
from torch import nn

from .multihead import MultiHeadAttention, check_divisible
from .support.language import tr
from .support.validation import (
    check_positive_int,
    check_probability,
    check_token_ids,
    checked,
    checking,
)


@dataclass(frozen=True)
class GPT1Config:
    """The sizes of a GPT1: vocabulary n_vocab (vocab_size), context n_ctx, width d_model,
    L blocks (n_layers), n_h heads (n_heads).

    Notebook 07.
    """

    vocab_size: int
    n_ctx: int = 512  # the context length k: positions 0 .. n_ctx-1 have an embedding in W_p
    d_model: int = 768
    n_layers: int = 12
    n_heads: int = 12
    d_ff: int | None = None  # 4 * d_model when None, as in GPT-1
    # GPT-1 used 0.1 on the embeddings, each residual branch and the attention weights.
    dropout: float = 0.0

    def __post_init__(self):
        for name in ("vocab_size", "n_ctx", "d_model", "n_layers", "n_heads"):
            check_positive_int(name, getattr(self, name))
        check_divisible(self.d_model, self.n_heads)
        if self.d_ff is not None and (
            isinstance(self.d_ff, bool) or not isinstance(self.d_ff, int) or self.d_ff < 1
        ):
            raise ValueError(
                tr(
                    "d_ff must be a positive int or None, got {d_ff!r}",
                    d_ff=self.d_ff,
                )
            )
        check_probability("dropout", self.dropout)

    @property
    def ff_width(self) -> int:
        return self.d_ff or 4 * self.d_model

    @classmethod
    def paper(cls) -> GPT1Config:
        """GPT-1 as published: 12 layers, 768 dimensions, 12 heads, 512 positions, a BPE
        vocabulary of 40,478 tokens, and dropout 0.1."""
        return cls(vocab_size=40478, n_ctx=512, d_model=768, n_layers=12, n_heads=12, dropout=0.1)

    @classmethod
    def small(cls, vocab_size: int, n_ctx: int = 32) -> GPT1Config:
        """The same architecture at a size a laptop CPU trains in seconds: 2 blocks of
        64 dimensions with 4 heads (d_head = 16) and a 256-wide feed-forward layer."""
        return cls(vocab_size=vocab_size, n_ctx=n_ctx, d_model=64, n_layers=2, n_heads=4)

    def parameter_count(self) -> int:
        """The number of parameters GPT1(self) holds, from the formula (W_e counted once:
        the output layer reuses it)."""
        d, f = self.d_model, self.ff_width
        attention = 4 * (d * d + d)  # W_Q, W_K, W_V, W_O with their biases
        feed_forward = (d * f + f) + (f * d + d)
        layer_norms = 2 * (2 * d)  # a gain and a bias for each of the two LayerNorms
        block = attention + feed_forward + layer_norms
        return self.vocab_size * d + self.n_ctx * d + self.n_layers * block


def one_hot(ids: torch.Tensor, vocab_size: int, dtype: torch.dtype = torch.float32) -> torch.Tensor:
    """U: one row per token, 1.0 in the token's column and 0.0 elsewhere: (..., n, vocab).

    Floating point (float32 unless `dtype` says otherwise), so that U @ W_e is an ordinary
    matrix product.

    Notebook 06.
    """
    check_positive_int("vocab_size", vocab_size)
    if not isinstance(dtype, torch.dtype) or not dtype.is_floating_point:
        raise ValueError(
            tr(
                "dtype must be a floating-point torch.dtype, got {dtype!r}",
                dtype=dtype,
            )
        )
    check_token_ids(ids, vocab_size)
    U = torch.zeros(*ids.shape, vocab_size, device=ids.device, dtype=dtype)
    return U.scatter_(-1, ids.unsqueeze(-1), 1.0)


class GPT1Block(nn.Module):
    """h -> LN(h + MaskedMultiHead(h)) -> LN(. + FFN(.)), with FFN = Linear, GELU, Linear:
    post-LN, GPT-1's wiring. With norm_first=True, GPT-2's pre-LN wiring instead:
    h + MaskedMultiHead(LN(h)), then . + FFN(LN(.)) (GPT-2 adds one more LayerNorm after its
    last block, which is the model's, not the block's).

    Notebook 07.
    """

    def __init__(
        self, d_model: int, n_heads: int, d_ff: int, dropout: float = 0.0, norm_first: bool = False
    ):
        super().__init__()
        self.norm_first = norm_first
        self.attn = MultiHeadAttention(d_model, n_heads, causal=True, dropout=dropout)
        self.ln_1 = nn.LayerNorm(d_model)
        # GELU in the tanh approximation, as in GPT-1's code (notebook 07 measures the gap).
        self.ffn = nn.Sequential(
            nn.Linear(d_model, d_ff), nn.GELU(approximate="tanh"), nn.Linear(d_ff, d_model)
        )
        self.ln_2 = nn.LayerNorm(d_model)
        self.dropout = nn.Dropout(dropout)

    def forward(
        self,
        h: torch.Tensor,
        mask: torch.Tensor | None = None,
        *,
        cache=None,
        start: int = 0,
        causal: bool | None = None,
    ) -> torch.Tensor:
        """h_l = block(h_{l-1}); `cache`, `start` and `causal` go to the attention (see
        MultiHeadAttention.forward): a KV cache passes through here, not around it. The
        attention checks the arguments, unless GPT1 checked its own already."""
        if self.norm_first:  # pre-LN: each sublayer reads a normalised copy of the stream
            attended = self.attn(self.ln_1(h), mask, cache=cache, start=start, causal=causal)
            h = h + self.dropout(attended)
            return h + self.dropout(self.ffn(self.ln_2(h)))
        return self.add_and_norm(h, self.attn(h, mask, cache=cache, start=start, causal=causal))

    def add_and_norm(self, h, attended):
        """The rest of the block, post-LN as in GPT-1: residual, LayerNorm, FFN, residual,
        LayerNorm."""
        h = self.ln_1(h + self.dropout(attended))
        return self.ln_2(h + self.dropout(self.ffn(h)))


class GPT1(nn.Module):
    """A decoder-only transformer; forward(ids) returns next-token logits (..., n, vocab).

    Notebooks 06, 07 and 08.
    """

    def __init__(self, config: GPT1Config):
        super().__init__()
        if not isinstance(config, GPT1Config):
            raise TypeError(
                tr(
                    "config must be a GPT1Config, got {got_type}",
                    got_type=type(config).__name__,
                )
            )
        self.config = config
        self.W_e = nn.Embedding(config.vocab_size, config.d_model)
        self.W_p = nn.Parameter(torch.zeros(config.n_ctx, config.d_model))
        self.dropout = nn.Dropout(config.dropout)
        self.blocks = nn.ModuleList(
            GPT1Block(config.d_model, config.n_heads, config.ff_width, config.dropout)
            for _ in range(config.n_layers)
        )
        self.apply(self._init_weights)
        nn.init.normal_(self.W_p, std=0.02)

    @staticmethod
    def _init_weights(module: nn.Module) -> None:
        # GPT-1: weights drawn from N(0, 0.02²); biases start at zero.
        if isinstance(module, (nn.Linear, nn.Embedding)):
            nn.init.normal_(module.weight, std=0.02)
        if isinstance(module, nn.Linear) and module.bias is not None:
            nn.init.zeros_(module.bias)

    @property
    def device(self) -> torch.device:
        return self.W_e.weight.device

    def check_ids(self, ids: torch.Tensor, start: int = 0) -> torch.Tensor:
        """Token ids in range, on the model's device, and with positions start .. start+n-1
        inside the context."""
        check_token_ids(ids, self.config.vocab_size, self.config.n_ctx - start)
        if ids.device != self.device:
            raise ValueError(
                tr(
                    "ids must be on the model's device {device}, got {ids_device}",
                    device=self.device,
                    ids_device=ids.device,
                )
            )
        return ids

    def check_inputs(self, ids: torch.Tensor, mask: torch.Tensor | None, start: int = 0) -> None:
        """Everything forward needs of its arguments, checked once rather than in every layer."""
        n = self.check_ids(ids, start).shape[-1]
        if mask is not None:
            # h_0's shape, device and dtype without its memory: an expanded 0-d tensor
            h = self.W_e.weight.new_empty(()).expand(*ids.shape, self.config.d_model)
            self.blocks[0].attn.check_mask(h, mask, start + n)

    def embed(self, ids: torch.Tensor, start: int = 0) -> torch.Tensor:
        """h_0 = U W_e + W_p, computed as a row lookup (the same numbers, no one-hot matmul);
        the tokens sit at positions start .. start+n-1."""
        if checking():
            self.check_ids(ids, start)
        n = ids.shape[-1]
        return self.dropout(self.W_e(ids) + self.W_p[start : start + n])  # (..., n, d_model)

    def hidden_states(
        self,
        ids: torch.Tensor,
        mask: torch.Tensor | None = None,
        *,
        cache=None,
        causal: bool | None = None,
        every_layer: bool = False,
    ) -> torch.Tensor:
        """h_L: the last block's output, (..., n, d_model). With a KVCache, ids are the
        tokens after the cache's `length` positions, and the cache is extended by them.

        `every_layer=True` returns [h_0, h_1, ..., h_L] stacked, (L + 1, ..., n, d_model);
        `causal=False` leaves the causal mask out of every block for this call only (notebook
        07's explorer shows what the mask prevents), without changing the model. The
        arguments are checked here, once, not in every layer."""
        start = 0 if cache is None else cache.length
        if checking():
            self.check_inputs(ids, mask, start)
        if cache is not None:
            cache.check_room(ids.shape[-1])  # plain ints: no wait for the device per token
        with checked():
            h = self.embed(ids, start)  # h_0
            states = [h]
            for layer, block in enumerate(self.blocks):  # h_l = block(h_{l-1})
                layer_cache = None if cache is None else cache.layers[layer]
                h = block(h, mask, cache=layer_cache, start=start, causal=causal)
                states.append(h)
        if cache is not None:
            cache.length = start + ids.shape[-1]
        return torch.stack(states) if every_layer else h

    def forward(
        self,
        ids: torch.Tensor,
        mask: torch.Tensor | None = None,
        last_only: bool = False,
        *,
        cache=None,
    ) -> torch.Tensor:
        """Logits h_L W_eᵀ for every position, or only the last one (all that generation
        needs) when last_only: (..., n, vocab) or (..., vocab). `cache` is a KVCache that the
        new tokens extend (notebook 10)."""
        h = self.hidden_states(ids, mask, cache=cache)
        if last_only:
            h = h[..., -1, :]  # (..., n, d_model) -> (..., d_model)
        return self.logits(h)

    def logits(self, h: torch.Tensor) -> torch.Tensor:
        """h W_eᵀ: next-token logits from hidden states (..., d_model) -> (..., vocab)."""
        return h @ self.W_e.weight.T  # tied: the same storage as the input embedding

    def add_tokens(self, count: int, *, generator: torch.Generator | None = None) -> list[int]:
        """Append `count` new rows to W_e, drawn from N(0, 0.02²) like every other weight at
        initialisation, and return their ids: the delimiter and extract tokens that
        fine-tuning adds (GPT-1 §3.3, notebook 11). The trained rows are kept, and the output
        layer grows with W_e because it is W_e."""
        check_positive_int("count", count)
        old = self.W_e.weight.detach()
        new = torch.empty(count, old.shape[1], dtype=old.dtype)
        new.normal_(0.0, 0.02, generator=generator)
        # from_pretrained draws nothing: torch's global generator is left as it was
        self.W_e = nn.Embedding.from_pretrained(torch.cat([old, new.to(old.device)]), freeze=False)
        self.config = replace(self.config, vocab_size=old.shape[0] + count)
        return list(range(old.shape[0], old.shape[0] + count))


@contextmanager
def evaluating(model: nn.Module, grad_mode=torch.no_grad) -> Iterator[None]:
    """Eval mode (no dropout) under `grad_mode` (no gradients), restoring the model's mode
    afterwards."""
    was_training = model.training
    model.eval()
    try:
        with grad_mode():
            yield
    finally:
        model.train(was_training)


def check_gpt1(model) -> None:
    if not isinstance(model, GPT1):
        raise TypeError(
            tr(
                "model must be a GPT1, got {got_type}",
                got_type=type(model).__name__,
            )
        )


def parameter_breakdown(model: GPT1) -> dict[str, int]:
    """How many parameters each part of the model holds, every block included, keyed by the
    part's name in the course's language; the values add up to the model's total, with the
    tied W_e counted once.

    Notebook 07.
    """
    check_gpt1(model)

    def size(modules) -> int:
        return sum(p.numel() for m in modules for p in m.parameters())

    blocks = model.blocks
    return {
        tr("W_e token embedding (also the output layer)"): model.W_e.weight.numel(),
        tr("W_p position embedding"): model.W_p.numel(),
        tr("attention W_Q, W_K, W_V, W_O"): size(b.attn for b in blocks),
        tr("feed-forward (two linear layers)"): size(b.ffn for b in blocks),
        tr("LayerNorm gains and biases"): size(
            [*(b.ln_1 for b in blocks), *(b.ln_2 for b in blocks)]
        ),
    }
