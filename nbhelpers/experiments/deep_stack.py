"""Why GPT-1's block has residual connections and LayerNorm: a deep stack at initialisation.

The same stack of GPT1Blocks (same weights, same input) is wired five ways: plain (no
residual, no LayerNorm), residual only, LayerNorm only, both after the addition (post-LN,
GPT-1's block), and GPT-2's: each LayerNorm before its sublayer (GPT1Block(norm_first=True):
h + attn(LN(h)), then h + ffn(LN(h))) and one more LayerNorm after the last block, as GPT-2
has. For each we measure, after one forward and one backward pass of a simple loss
mean((output − target)²), where the output is h_L (and LN_f(h_L) for GPT-2),

    activation RMS        sqrt(mean(h_l²))            l = 0 .. L   (forward signal)
    upstream gradient     ‖∂loss/∂h_l‖                l = 0 .. L   (backward signal)
    output gradient       ‖∂loss/∂output‖                          (what the loss sends back)
    weight gradient       ‖∂loss/∂(block l's weight matrices)‖,  l = 1 .. L
    position cosine       mean cos(output_i, output_j), i ≠ j     (1: every position the same)
    input cosine          mean cos(output_i, h_0,i)                (what is left of the input)

Sizes alone can look healthy while the content is gone: the two cosines say whether the
positions still differ, and whether each still carries its own input.

A stack that ends in a LayerNorm, post-LN or GPT-2's, passes back about 1/√2 of the output
gradient at initialisation: the LayerNorm's Jacobian removes the component of the gradient
along its (centred, normalised) input, and for a target independent of the output about half
of ‖output − target‖² lies along the output.

The weights are drawn from N(0, 0.02²) with zero biases, as GPT-1 initialises them (or from a
wider normal distribution, to see what LayerNorm adds once the sublayers' outputs are large).

Notebook 07.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn

from ..gpt1 import GPT1Block
from ..multihead import check_divisible
from ..support.language import N_, tr
from ..support.validation import check_positive_int, check_seed, is_number

# A seconds-long CPU run; deeper, the plain stack's numbers (about 1e-4 lost per block at
# d_model = 32) would also leave even float64's range.
MAX_DEPTH = 64
INIT_STD = 0.02  # GPT-1's N(0, 0.02²)

# (name, residual, layer_norm, pre_ln), in the order the notebook discusses them. N_ marks the
# names for the catalogue: a figure's legend shows them translated.
VARIANTS = (
    (N_("plain"), False, False, False),
    (N_("residual only"), True, False, False),
    (N_("LayerNorm only"), False, True, False),
    (N_("residual + LayerNorm (GPT-1)"), True, True, False),
    (N_("pre-LN + final LayerNorm (GPT-2)"), True, True, True),
)


@dataclass(frozen=True)
class StackProfile:
    """One variant's measurements, float64 tensors on the CPU."""

    name: str
    residual: bool
    layer_norm: bool
    pre_ln: bool  # GPT-2: the LayerNorm before each sublayer, and a final one after h_L
    init_std: float  # the weights' standard deviation at initialisation
    activation_rms: torch.Tensor  # (L + 1,): h_0 (the input) .. h_L
    upstream_gradient: torch.Tensor  # (L + 1,): ‖∂loss/∂h_l‖, l = 0 .. L
    output_gradient: torch.Tensor  # (): ‖∂loss/∂output‖, output = h_L, or LN_f(h_L) for GPT-2
    weight_gradient: torch.Tensor  # (L,): blocks 1 .. L
    position_cosine: torch.Tensor  # (): mean cosine between two different positions of the output
    input_cosine: torch.Tensor  # (): mean cosine of each position's output with its own h_0

    @property
    def depth(self) -> int:
        return len(self.weight_gradient)


def scaled_norm(x: torch.Tensor) -> torch.Tensor:
    """‖x‖, computed on x / max|x| and scaled back: squaring the plain stack's 1e-200s
    directly would underflow to 0 even in float64."""
    largest = x.detach().abs().max()
    if not largest > 0 or not torch.isfinite(largest):
        return largest  # 0, inf or nan: nothing to rescale
    return largest * torch.linalg.vector_norm(x.detach() / largest)


def rms(x: torch.Tensor) -> torch.Tensor:
    """sqrt(mean(x²)), without underflow (see scaled_norm)."""
    return scaled_norm(x) / x.numel() ** 0.5


def cosines(output: torch.Tensor, h_0: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """(mean cosine between two different positions of `output`, mean cosine of each
    position's output with its own input) for (..., n, d) tensors."""
    # Each vector divided by its own length, with no floor: the plain stack's outputs are
    # about 1e-92 long, where F.normalize's and F.cosine_similarity's eps would give 0.
    unit, unit_0 = (x.detach() / torch.linalg.vector_norm(x.detach(), dim=-1, keepdim=True)
                    for x in (output, h_0))  # fmt: skip
    between = unit @ unit.transpose(-1, -2)  # (..., n, n)
    off_diagonal = ~torch.eye(unit.shape[-2], dtype=torch.bool)
    return between[..., off_diagonal].mean(), (unit * unit_0).sum(dim=-1).mean()


def check_switch(name: str, value) -> None:
    if not isinstance(value, bool):
        raise TypeError(tr("{name} must be True or False, got {value!r}", name=name, value=value))


def block_forward(
    block: GPT1Block, h: torch.Tensor, *, residual: bool = True, layer_norm: bool = True
) -> torch.Tensor:
    """A post-LN GPT1Block's own sublayers, with the residual additions and the LayerNorms
    switched on or off; with both on it is GPT1Block.forward (without dropout). (GPT-2's
    pre-LN wiring is GPT1Block(norm_first=True) itself.)"""
    if not isinstance(block, GPT1Block):
        raise TypeError(
            tr("block must be a GPT1Block, got {block_type}", block_type=type(block).__name__)
        )
    check_switch("residual", residual)
    check_switch("layer_norm", layer_norm)
    attended = block.attn(h)
    h = h + attended if residual else attended
    if layer_norm:
        h = block.ln_1(h)
    transformed = block.ffn(h)
    h = h + transformed if residual else transformed
    return block.ln_2(h) if layer_norm else h


def check_init_std(init_std) -> None:
    if not is_number(init_std) or not 0 < init_std < float("inf"):
        raise ValueError(
            tr("init_std must be a positive number, got {init_std!r}", init_std=init_std)
        )


def check_stack_sizes(depth, d_model, n_heads, n_tokens, batch, seed) -> None:
    check_positive_int("depth", depth)
    if depth > MAX_DEPTH:
        raise ValueError(
            tr(
                "depth must be at most {MAX_DEPTH} (deeper, the plain stack's activations "
                "underflow even in float64), got {depth}",
                MAX_DEPTH=MAX_DEPTH,
                depth=depth,
            )
        )
    for name, value in (("n_tokens", n_tokens), ("batch", batch)):
        check_positive_int(name, value)
    check_divisible(d_model, n_heads)
    check_seed("seed", seed)


def deep_stack(
    depth: int,
    d_model: int = 32,
    n_heads: int = 4,
    *,
    init_std: float = INIT_STD,
    generator: torch.Generator | None = None,
    norm_first: bool = False,
) -> nn.ModuleList:
    """`depth` GPT1Blocks (feed-forward width 4·d_model) initialised as GPT-1: linear
    weights from N(0, init_std²), GPT-1's 0.02 by default, biases zero. In float64, so
    that the plain stack's tiny numbers stay representable (float32 ends near 1e-45).
    Drawn from `generator` (default: a fresh one seeded 0); torch's global generator is left
    as it was."""
    check_stack_sizes(depth, d_model, n_heads, 1, 1, 0)
    check_init_std(init_std)
    if generator is None:
        generator = torch.Generator().manual_seed(0)
    elif not isinstance(generator, torch.Generator):
        raise TypeError(
            tr(
                "generator must be a torch.Generator or None, got {generator!r}",
                generator=generator,
            )
        )
    # nn.Linear draws its default initialisation from the global generator; fork it so that
    # building this stack leaves the rest of a notebook's random numbers as they were.
    with torch.random.fork_rng(devices=[]):
        blocks = nn.ModuleList(
            GPT1Block(d_model, n_heads, 4 * d_model, norm_first=norm_first) for _ in range(depth)
        )
    blocks = blocks.to(torch.float64).eval()
    with torch.no_grad():
        for module in blocks.modules():
            if isinstance(module, nn.Linear):
                module.weight.normal_(0.0, init_std, generator=generator)
                module.bias.zero_()
    return blocks


def weight_matrices(block: GPT1Block) -> list[torch.Tensor]:
    """W_Q, W_K, W_V, W_O and the feed-forward layer's two matrices: the weights every
    variant uses (the LayerNorm gains exist only where LayerNorm is switched on)."""
    attn = block.attn
    linears = (attn.W_Q, attn.W_K, attn.W_V, attn.W_O, block.ffn[0], block.ffn[2])
    return [linear.weight for linear in linears]


def profile_stack(
    blocks: nn.ModuleList,
    h_0: torch.Tensor,
    target: torch.Tensor,
    *,
    name: str,
    residual: bool,
    layer_norm: bool,
    final_norm: nn.LayerNorm | None = None,
    init_std: float = INIT_STD,
) -> StackProfile:
    """One forward pass through `blocks` (post-LN blocks wired as asked, or pre-LN blocks as
    they are), the output h_L, or final_norm(h_L), the loss mean((output − target)²), and one
    backward pass: the per-layer measurements (`init_std` is recorded with them)."""
    pre_ln = blocks[0].norm_first
    states = [h_0.detach().requires_grad_()]
    for block in blocks:
        if pre_ln:
            states.append(block(states[-1]))
        else:
            states.append(
                block_forward(block, states[-1], residual=residual, layer_norm=layer_norm)
            )
    output = final_norm(states[-1]) if final_norm is not None else states[-1]
    loss = ((output - target) ** 2).mean()
    weights = [weight_matrices(block) for block in blocks]
    flat = [w for ws in weights for w in ws]
    # autograd.grad leaves .grad alone, so the same blocks serve several variants.
    gradients = torch.autograd.grad(loss, [*states, output, *flat])
    state_grads = gradients[: len(states)]
    output_grad, weight_grads = gradients[len(states)], gradients[len(states) + 1 :]
    per_block = len(weights[0])
    block_norms = [
        scaled_norm(torch.cat([g.flatten() for g in weight_grads[i : i + per_block]]))
        for i in range(0, len(weight_grads), per_block)
    ]
    position_cosine, input_cosine = cosines(output, h_0)
    return StackProfile(
        name=name,
        residual=residual,
        layer_norm=layer_norm,
        pre_ln=pre_ln,
        init_std=init_std,
        activation_rms=torch.stack([rms(state) for state in states]),
        upstream_gradient=torch.stack([scaled_norm(g) for g in state_grads]),
        output_gradient=scaled_norm(output_grad),
        weight_gradient=torch.stack(block_norms),
        position_cosine=position_cosine,
        input_cosine=input_cosine,
    )


def compare_stacks(
    depth: int = 24,
    d_model: int = 32,
    n_heads: int = 4,
    *,
    n_tokens: int = 8,
    batch: int = 4,
    seed: int = 0,
    init_std: float = INIT_STD,
) -> list[StackProfile]:
    """The five VARIANTS on one stack of `depth` blocks: the same weights (from
    N(0, init_std²)), the same random input h_0 (RMS about 1) and the same random target;
    only the wiring differs (GPT-2's blocks are pre-LN copies of the same weights, followed
    by a fresh final LayerNorm). Far from the defaults (a much wider init_std, a narrow
    d_model) some numbers leave float64's range: they come back as 0, inf or nan."""
    check_stack_sizes(depth, d_model, n_heads, n_tokens, batch, seed)
    check_init_std(init_std)
    generator = torch.Generator().manual_seed(seed)
    shape = (batch, n_tokens, d_model)
    h_0 = torch.randn(shape, generator=generator, dtype=torch.float64)
    target = torch.randn(shape, generator=generator, dtype=torch.float64)
    blocks = deep_stack(depth, d_model, n_heads, init_std=init_std, generator=generator)
    gpt2_blocks = deep_stack(depth, d_model, n_heads, init_std=init_std, norm_first=True)
    gpt2_blocks.load_state_dict(blocks.state_dict())  # the same weights, wired pre-LN
    final_norm = nn.LayerNorm(d_model, dtype=torch.float64)  # GPT-2's ln_f, as initialised
    return [
        profile_stack(
            gpt2_blocks if pre_ln else blocks,
            h_0,
            target,
            name=name,
            residual=residual,
            layer_norm=layer_norm,
            final_norm=final_norm if pre_ln else None,
            init_std=init_std,
        )
        for name, residual, layer_norm, pre_ln in VARIANTS
    ]
