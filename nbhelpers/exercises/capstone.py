"""The capstone: the learner's own parts assemble a GPT-1 that learns the grammar, measured
against the truth.

    parts = use_parts(attention=MyCausalMultiHead, block=MyGPT1Block,
                      forward=my_gpt1_forward, step=my_accumulated_step)
    result = train_your_gpt1(parts)      # the exact KL(p ‖ p̂) per token it reaches

`use_parts` runs each part's checker first: a part that passes is used, one that has not
passed yet is replaced by nbhelpers' own, and the report says which is which (ARENA's
pattern: each part checked, then used). `parts.model(config)` builds the model from them, so
later notebooks can run on the learner's parts too.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np
import torch
from torch import nn

from ..gpt1 import GPT1, GPT1Block, GPT1Config
from ..multihead import MultiHeadAttention
from ..support.language import tr
from ..support.validation import check_positive_int, check_positive_number, check_seed
from .core import FAILED, NOT_ATTEMPTED, PASSED, leaves_state_alone
from .multi_head import check_causal_multi_head
from .training import accumulated_step, check_accumulated_step
from .transformer_block import check_gpt1_block, check_gpt1_forward

GOAL_KL = 0.05  # nats per predicted token
CHECKERS = {
    "attention": check_causal_multi_head,
    "block": check_gpt1_block,
    "forward": check_gpt1_forward,
    "step": check_accumulated_step,
}


def reference_forward(model, ids):
    """h_L W_eᵀ from the parts of any model with W_e, W_p and blocks (nbhelpers' own)."""
    h = model.W_e(ids) + model.W_p[: ids.shape[-1]]
    for block in model.blocks:
        h = block(h)
    return h @ model.W_e.weight.T


class CausalMultiHeadAttention(nn.Module):
    """nbhelpers' causal multi-head attention with the learner's interface: (output, weights)."""

    def __init__(self, d_model: int, n_heads: int):
        super().__init__()
        self.inner = MultiHeadAttention(d_model, n_heads, causal=True)

    def forward(self, x):
        return self.inner(x, return_weights=True)


class AsBlockAttention(nn.Module):
    """An attention of the learner's interface, x -> (output, weights), where a block calls
    attn(h, mask, cache=..., ...): the block gets the output. A causal one masks itself."""

    def __init__(self, attention: nn.Module):
        super().__init__()
        self.attention = attention

    def forward(self, h, mask=None, **ignored):
        out = self.attention(h)
        return out[0] if isinstance(out, tuple) else out

    forward_unchecked = forward  # as a block inside nbhelpers' GPT1 calls it


class YourGPT1(nn.Module):
    """GPT-1 from parts: W_e, W_p, blocks built by `block(d_model, n_heads, d_ff)` whose
    attention is `attention(d_model, n_heads)`, and `forward(model, ids)` for the logits."""

    def __init__(self, config: GPT1Config, parts: Parts):
        super().__init__()
        self.config, self.parts = config, parts
        self.W_e = nn.Embedding(config.vocab_size, config.d_model)
        self.W_p = nn.Parameter(torch.zeros(config.n_ctx, config.d_model))
        self.blocks = nn.ModuleList(
            parts.block(config.d_model, config.n_heads, config.ff_width)
            for _ in range(config.n_layers)
        )
        for block in self.blocks:
            block.attn = AsBlockAttention(parts.attention(config.d_model, config.n_heads))
        self.apply(GPT1._init_weights)
        nn.init.normal_(self.W_p, std=0.02)

    @property
    def device(self) -> torch.device:
        return self.W_e.weight.device

    def forward(self, ids):
        return self.parts.forward(self, ids)


@dataclass
class Parts:
    """The four parts a GPT-1 is assembled from, each the learner's or nbhelpers' own."""

    attention: type = CausalMultiHeadAttention
    block: type = GPT1Block
    forward: object = reference_forward
    step: object = accumulated_step
    yours: list[str] = field(default_factory=list)  # the names of the learner's parts in use
    lines: list[str] = field(default_factory=list)

    def model(self, config: GPT1Config) -> YourGPT1:
        return YourGPT1(config, self)

    def __repr__(self) -> str:
        return "\n".join(self.lines)

    def _repr_pretty_(self, printer, cycle) -> None:
        printer.text(repr(self))


def use_parts(attention=None, block=None, forward=None, step=None, *, checked=True) -> Parts:
    """Check each part given (None: not given) with its exercise's checker; use it if it
    passes, nbhelpers' own if it does not, and say which. With checked=False every part
    given is used as it is: to see what a bug does to training."""
    parts, given = (
        Parts(),
        {"attention": attention, "block": block, "forward": forward, "step": step},
    )
    names = {
        "attention": tr("attention (notebook 05, Exercise 2)"),
        "block": tr("block (notebook 07, Exercise 1)"),
        "forward": tr("forward pass (notebook 07, Exercise 2)"),
        "step": tr("training step (notebook 08, Exercise 2)"),
    }
    for name, answer in given.items():
        if answer is None:
            parts.lines.append("  " + tr("· {part}: nbhelpers' own (none given)", part=names[name]))
            continue
        if not checked:
            setattr(parts, name, answer)
            parts.yours.append(name)
            parts.lines.append(
                "  " + tr("! {part}: yours, used without its checker", part=names[name])
            )
            continue
        result = CHECKERS[name](answer)
        if result.status == PASSED:
            setattr(parts, name, answer)
            parts.yours.append(name)
            parts.lines.append("  " + tr("✓ {part}: yours", part=names[name]))
        else:
            why = tr("not attempted") if result.status == NOT_ATTEMPTED else tr("its checker fails")
            parts.lines.append(
                "  "
                + tr(
                    "… {part}: nbhelpers' own, since yours has not passed its checker yet ({why})",
                    part=names[name],
                    why=why,
                )
            )
    parts.lines.insert(0, tr("Your GPT-1 is assembled from:"))
    return parts


@dataclass
class CapstoneResult:
    """What the capstone measured: the KL reached, when, and what the losses say."""

    status: str
    lines: list[str]
    kl: float | None = None
    steps: int = 0
    seconds: float = 0.0
    losses: list[float] = field(default_factory=list)
    # what the diagnosis found, in words no translation changes: "sees the future",
    # "targets not shifted", "no gradient", "context ignored", "too slow"; None if passed
    fault: str | None = None

    def __bool__(self) -> bool:
        return self.status == PASSED

    def __repr__(self) -> str:
        return "\n".join(self.lines)

    def _repr_pretty_(self, printer, cycle) -> None:
        printer.text(repr(self))


def diagnosis(model, grammar, losses: list[float], heldout_ids, floor: float, unigram: float):
    """(fault, hint): which part is likely at fault, from what the training losses and the
    predictions show."""
    last = float(np.mean(losses[-10:]))
    if last < floor - 0.05:
        # Below the floor no honest model goes: it reads what it should predict. Which token?
        with torch.no_grad():
            ids = heldout_ids[:200].to(model.device)
            guess = model(ids[:, :-1]).argmax(-1)
        real = ids[:, 1:] != grammar.tokenizer.pad_id
        copies = float((guess == ids[:, :-1])[real].float().mean())
        peeks = float((guess == ids[:, 1:])[real].float().mean())
        if copies > peeks:
            return "targets not shifted", tr(
                "the training loss {loss:.2f} is below the grammar's floor {floor:.2f} and the "
                "model predicts the token it reads: the targets are not shifted (position t "
                "must predict token t + 1)",
                loss=last,
                floor=floor,
            )
        return "sees the future", tr(
            "the training loss {loss:.2f} is below the grammar's floor {floor:.2f}, which no "
            "model can reach honestly: it sees the future. Is the causal mask in your attention?",
            loss=last,
            floor=floor,
        )
    if len(losses) > 20 and last > np.mean(losses[:5]) - 0.05:
        return "no gradient", tr(
            "the training loss does not move ({first:.2f} → {last:.2f}): no gradient reaches "
            "the weights. Does your step call zero_grad before backward and step after it?",
            first=float(np.mean(losses[:5])),
            last=last,
        )
    if abs(last - unigram) < 0.1:
        return "context ignored", tr(
            "the training loss {loss:.2f} is stuck at the level of a model that ignores the "
            "context ({unigram:.2f}): does every block's output reach the next, and the last "
            "the output layer?",
            loss=last,
            unigram=unigram,
        )
    return "too slow", tr(
        "it learns, but too slowly: compare your attention's scaling (√d_head) and the block's "
        "order (post-LN) with their checkers' hints"
    )


@leaves_state_alone
def train_your_gpt1(
    parts: Parts, *, seconds: float = 60.0, steps: int = 400, goal: float = GOAL_KL, seed: int = 0
) -> CapstoneResult:
    """Train a GPT-1 assembled from `parts` on the grammar's sentences (one block of 64
    dimensions with 4 heads, batches of 256, Adam with warm-up and cosine decay, as notebook
    08) until its exact KL(p ‖ p̂) per predicted held-out token is at most `goal`, or `steps`
    steps or `seconds` of training have passed. When it stops short, say which part is likely
    at fault."""
    from ..corpus import JapaneseGrammar
    from ..experiments.heldout import make_heldout, measure
    from ..experiments.pretraining import corpus_model_config, learning_rate

    if not isinstance(parts, Parts):
        raise TypeError(
            tr(
                "parts must come from use_parts(...), got {parts_type}",
                parts_type=type(parts).__name__,
            )
        )
    check_positive_int("steps", steps)
    check_seed("seed", seed)
    check_positive_number("seconds", seconds)
    check_positive_number("goal", goal)
    exercise = "capstone"
    if not parts.yours:
        return CapstoneResult(
            NOT_ATTEMPTED,
            [
                tr(
                    "… {exercise}: nothing of yours has passed its checker yet, so there is no "
                    "GPT-1 of yours to train. Finish the exercises, then give your parts to "
                    "use_parts.",
                    exercise=exercise,
                )
            ],
        )
    grammar = JapaneseGrammar()
    heldout = make_heldout(grammar, n=500)
    torch.manual_seed(seed)
    model = parts.model(corpus_model_config(grammar))
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    rng = np.random.default_rng(seed)
    pad_id = grammar.tokenizer.pad_id
    losses: list[float] = []
    kl, elapsed, done = None, 0.0, 0
    model.train()
    for step in range(1, steps + 1):
        start = time.perf_counter()
        ids = grammar.sample_ids(256, rng)
        ids = ids[:, : int((ids != pad_id).sum(1).max())]
        for group in optimizer.param_groups:
            group["lr"] = learning_rate(step - 1, steps, 1e-2, 50)
        losses.append(float(parts.step(model, optimizer, ids, pad_id, 256)))
        elapsed += time.perf_counter() - start
        done = step
        if step % 20 == 0 or step == steps or elapsed > seconds:
            kl = measure(model, heldout).kl
            model.train()
            if kl <= goal or elapsed > seconds:
                break
    model.eval()
    short = {
        "attention": tr("attention"),
        "block": tr("block"),
        "forward": tr("forward pass"),
        "step": tr("training step"),
    }
    yours = tr(", ").join(short[name] for name in parts.yours)
    if kl is not None and kl <= goal:
        return CapstoneResult(
            PASSED,
            [
                tr(
                    "✓ {exercise}: your GPT-1 (yours: {yours}) reached KL(p ‖ p̂) = {kl:.3f} "
                    "nats per token ≤ {goal} after {steps} steps, {seconds:.0f} s of training",
                    exercise=exercise,
                    yours=yours,
                    kl=kl,
                    goal=goal,
                    steps=done,
                    seconds=elapsed,
                )
            ],
            kl,
            done,
            elapsed,
            losses,
        )
    counts = torch.bincount(
        heldout.ids[:, 1:][heldout.mask], minlength=grammar.tokenizer.vocab_size
    )
    p = counts.double() / counts.sum()
    unigram = float(-(p[p > 0] * p[p > 0].log()).sum())
    fault, why = diagnosis(model, grammar, losses, heldout.ids, grammar.entropy_rate(), unigram)
    return CapstoneResult(
        FAILED,
        [
            tr(
                "✗ {exercise}: your GPT-1 (yours: {yours}) stopped at KL(p ‖ p̂) = {kl:.3f} nats "
                "per token after {steps} steps, {seconds:.0f} s (goal ≤ {goal})",
                exercise=exercise,
                yours=yours,
                kl=float("nan") if kl is None else kl,
                steps=done,
                seconds=elapsed,
                goal=goal,
            ),
            "  " + tr("hint: {hint}", hint=why),
        ],
        kl,
        done,
        elapsed,
        losses,
        fault,
    )
