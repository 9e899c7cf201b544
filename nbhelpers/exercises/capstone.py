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

from dataclasses import dataclass, field

import numpy as np
import torch
from torch import nn

from ..gpt1 import GPT1, GPT1Block, GPT1Config
from ..multihead import MultiHeadAttention
from ..support.language import listing, tr
from ..support.validation import check_positive_int, check_positive_number, check_seed
from .core import *  # noqa: F403 (the checkers' toolkit: core.__all__)
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


class PartRaised(Exception):
    """One of the learner's parts raised: which one, and what it raised."""

    def __init__(self, part: str, error: BaseException):
        super().__init__(part)
        self.part, self.error = part, error


def as_part(part: str, call, *args, **kwargs):
    """call(*args, **kwargs), an error inside it named after the part that raised it (the
    innermost part: an error inside the attention is the attention's, not the block's)."""
    try:
        return call(*args, **kwargs)
    except PartRaised:
        raise
    except Exception as error:
        raise PartRaised(part, error) from error


class AsBlockAttention(nn.Module):
    """The learner's attention (x -> (output, weights), causal: it masks itself) in a block's
    `attn`, answering as the attention the block was built with did: the output alone, or
    (output, weights) for a block that unpacks a tuple."""

    def __init__(self, attention: nn.Module, as_tuple: bool = False):
        super().__init__()
        self.attention, self.as_tuple = attention, as_tuple

    def forward(self, h, mask=None, **ignored):
        out = as_part("attention", self.attention, h)
        output = out[0] if isinstance(out, tuple) else out
        if not self.as_tuple:
            return output
        return out if isinstance(out, tuple) else (output, None)


def answers_a_tuple(attn: nn.Module, d_model: int) -> bool:
    """Whether a block's own attention returns a tuple (as the learner's fused attention of
    notebook 05 does) rather than the output alone: tried once, on two positions."""
    with torch.no_grad():
        try:
            return isinstance(attn(torch.zeros(1, 2, d_model)), tuple)
        except Exception:  # its own errors show when the block runs
            return False


class AsPart(nn.Module):
    """A block, its errors named "block" (the verdict says whether the block is the learner's
    or nbhelpers' own, raising on what the learner's attention returned)."""

    def __init__(self, block: nn.Module):
        super().__init__()
        self.block = block

    def forward(self, h):
        return as_part("block", self.block, h)


class YourGPT1(nn.Module):
    """GPT-1 from parts: W_e, W_p, blocks built by `block(d_model, n_heads, d_ff)` whose
    attention is `attention(d_model, n_heads)`, and `forward(model, ids)` for the logits."""

    def __init__(self, config: GPT1Config, parts: Parts):
        super().__init__()
        self.config, self.parts = config, parts
        self.W_e = nn.Embedding(config.vocab_size, config.d_model)
        self.W_p = nn.Parameter(torch.zeros(config.n_ctx, config.d_model))
        blocks = [
            as_part("block", parts.block, config.d_model, config.n_heads, config.ff_width)
            for _ in range(config.n_layers)
        ]
        for block in blocks:
            attention = as_part("attention", parts.attention, config.d_model, config.n_heads)
            own = getattr(block, "attn", None)
            as_tuple = own is not None and answers_a_tuple(own, config.d_model)
            block.attn = AsBlockAttention(attention, as_tuple)
        # each block is called through AsPart, so that an error inside one names the block
        self.blocks = nn.ModuleList(AsPart(block) for block in blocks)
        self.apply(GPT1._init_weights)
        nn.init.normal_(self.W_p, std=0.02)

    @property
    def device(self) -> torch.device:
        return self.W_e.weight.device

    def forward(self, ids):
        return as_part("forward", self.parts.forward, self, ids)


@dataclass
class Parts:
    """The four parts a GPT-1 is assembled from, each the learner's or nbhelpers' own."""

    attention: type = CausalMultiHeadAttention
    block: type = GPT1Block
    forward: object = reference_forward
    step: object = accumulated_step
    yours: list[str] = field(default_factory=list)  # the names of the learner's parts in use
    unchecked: list[str] = field(default_factory=list)  # those used without their checker
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
            parts.unchecked.append(name)
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


@dataclass(repr=False)
class CapstoneResult(Report):
    """What the capstone measured: the KL reached, when, and what the losses say."""

    status: str
    lines: list[str]
    kl: float | None = None
    steps: int = 0
    seconds: float = 0.0
    losses: list[float] = field(default_factory=list)
    # what the diagnosis found, in words no translation changes: "raised", "forward output",
    # "no gradient", "probabilities", "not finite", "sees the future", "targets not
    # shifted", "loss climbs", "no learning", "context ignored", "time ran out", "too slow";
    # None if passed
    fault: str | None = None


def suspect_questions() -> dict:
    """Which of the four parts can cause what training shows, and what to look at in each."""
    return {
        "sees the future": {
            "attention": tr("is the causal mask in your attention, added before softmax?"),
            "forward": tr("does your forward pass give the model the token it must predict?"),
            "block": tr("does your block keep its attention's causal mask?"),
        },
        "targets not shifted": {
            "step": tr("your step must compare the logits at position t with token t + 1"),
        },
        "loss climbs": {
            "step": tr(
                "does your step clear the old gradients, optimizer.zero_grad(), before "
                "backward? Without it they add up from step to step"
            ),
        },
        "no learning": {
            "step": tr(
                "does your step call loss.backward() and then optimizer.step(), with "
                "zero_grad() before backward, not between the two?"
            ),
            "forward": tr("do the logits come from the model's weights, W_e and the blocks?"),
        },
        "context ignored": {
            "block": tr("does each block pass its attention's output on (h + attn(h))?"),
            "forward": tr(
                "does every block's output reach the next, and the last the output layer?"
            ),
            "attention": tr("does your attention mix the values of the positions it may see?"),
        },
        "not finite": {
            "step": tr("is the loss a mean over the predicted tokens, with <PAD> ignored?"),
            "attention": tr("does a fully masked row give NaN in your attention?"),
            "forward": tr("does your forward pass return finite logits?"),
            "block": tr("does your block return finite values?"),
        },
    }


# The faults seen by looking at the learner's forward pass before training.
FORWARD_FAULTS = ("forward output", "no gradient", "probabilities")


def part_name(name: str) -> str:
    """A part's name as the learner reads it."""
    return {
        "attention": tr("attention"),
        "block": tr("block"),
        "forward": tr("forward pass"),
        "step": tr("training step"),
    }[name]


def suspects(fault: str, parts: Parts) -> list[str]:
    """What to look at, in the learner's own parts only: nbhelpers' parts are not blamed."""
    questions = suspect_questions().get(fault, {})
    return [question for part, question in questions.items() if part in parts.yours]


def diagnosis(model, grammar, losses: list[float], heldout_ids, floor: float, unigram: float):
    """(fault, what was seen) from the training losses and the predictions, or (None, None)
    when the losses show no fault."""
    first, last = float(np.mean(losses[:5])), float(np.mean(losses[-10:]))
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
                "model predicts the token it reads: the targets are not shifted",
                loss=last,
                floor=floor,
            )
        return "sees the future", tr(
            "the training loss {loss:.2f} is below the grammar's floor {floor:.2f}, which no "
            "model can reach honestly: it sees the future",
            loss=last,
            floor=floor,
        )
    if len(losses) >= 10 and last > first + 0.1:
        return "loss climbs", tr(
            "the training loss climbs ({first:.2f} → {last:.2f})", first=first, last=last
        )
    if len(losses) > 20 and abs(last - first) < 0.05:
        return "no learning", tr(
            "the training loss does not move ({first:.2f} → {last:.2f}): the weights do not learn",
            first=first,
            last=last,
        )
    # the loss passes the unigram level on its way down: stuck means it stayed there
    settled = len(losses) >= 40 and abs(last - float(np.mean(losses[-20:-10]))) < 0.05
    if settled and abs(last - unigram) < 0.1:
        return "context ignored", tr(
            "the training loss {loss:.2f} is stuck at the level of a model that ignores the "
            "context ({unigram:.2f})",
            loss=last,
            unigram=unigram,
        )
    return None, None


def probe_forward(model, ids) -> tuple[str, str] | tuple[None, None]:
    """What the learner's forward pass returns, looked at before any training: logits that
    carry no gradient, or probabilities where logits belong."""
    logits = model(ids)
    if not isinstance(logits, torch.Tensor) or logits.shape != (
        *ids.shape,
        model.config.vocab_size,
    ):
        return "forward output", tr(
            "your forward pass returned {got}, where the logits (B, n, n_vocab) = {shape} belong",
            got=type(logits).__name__
            if not isinstance(logits, torch.Tensor)
            else str(tuple(logits.shape)),
            shape=(*ids.shape, model.config.vocab_size),
        )
    if not logits.requires_grad:
        return "no gradient", tr(
            "the logits of your forward pass carry no gradient, so nothing can learn: is it "
            "run under torch.no_grad(), or are the logits detached?"
        )
    with torch.no_grad():
        rows = logits.detach().double()
        if bool((rows >= 0).all()) and bool(torch.allclose(rows.sum(-1), torch.ones(1).double())):
            return "probabilities", tr(
                "your forward pass returns probabilities (each row sums to 1) where the logits "
                "belong: F.cross_entropy applies softmax itself, so return h_L W_eᵀ before "
                "softmax"
            )
    return None, None


def checkers_say(parts: Parts, names) -> list[str]:
    """For each of the learner's parts among `names` used without its checker: its
    checker's verdict, when it fails (the report's first hint, else its problem)."""
    said = []
    for name in names:
        if name not in parts.unchecked:
            continue
        result = CHECKERS[name](getattr(parts, name))
        if result.status == FAILED:
            detail = next(
                (
                    line.strip()
                    for line in result.lines
                    if line.strip().startswith(tr("hint: {hint}", hint=""))
                ),
                result.lines[-1].strip(),
            )
            said.append(
                tr("your {part} fails its checker: {detail}", part=part_name(name), detail=detail)
            )
    return said


@dataclass
class Training:
    """What a training run saw: the losses, the last KL measured, and a fault if one showed."""

    losses: list[float] = field(default_factory=list)
    kl: float | None = None
    elapsed: float = 0.0
    done: int = 0
    fault: str | None = None
    seen: str | None = None
    raised: PartRaised | None = None


def train(
    model, parts: Parts, grammar, heldout, *, steps: int, seconds: float, goal: float, seed: int
) -> Training:
    """Notebook 08's recipe on the learner's parts: Adam with warm-up and cosine decay,
    batches of 256 given whole to the step with micro_batch=128, the KL measured every 20
    steps; it stops at the goal, at `steps`, at `seconds`, or at the first fault."""
    from ..experiments import training_loop
    from ..experiments.heldout import measure
    from ..experiments.pretraining import learning_rate, sentence_batches

    run, pad_id = Training(), grammar.tokenizer.pad_id
    try:
        if "forward" in parts.yours:
            run.fault, run.seen = probe_forward(model, heldout.ids[:8, :-1].to(model.device))
        if run.fault is not None:
            return run
        optimizer, schedule = training_loop.adam(
            model.parameters(), lambda step: learning_rate(step, steps, 1e-2, 50)
        )
        rng = np.random.default_rng(seed)

        def update(ids):  # two micro-batches: a step that mishandles them shows
            return float(as_part("step", parts.step, model, optimizer, ids, pad_id, 128))

        def after(step, loss, elapsed):
            run.losses.append(loss)
            run.elapsed, run.done = elapsed, step
            if not np.isfinite(loss):
                run.fault = "not finite"
                run.seen = tr(
                    "the training loss became {loss} at step {step}", loss=loss, step=step
                )
                return True
            if step % 20 == 0 or step == steps or elapsed > seconds:
                run.kl = measure(model, heldout).kl
                model.train()
                return run.kl <= goal or elapsed > seconds
            return False

        model.train()
        training_loop.run(sentence_batches(grammar, 256, steps, rng), update, schedule, after)
    except PartRaised as raised:
        run.raised = raised
    return run


def unigram_entropy(grammar, heldout) -> float:
    """The loss of a model that ignores the context: the entropy of the held-out tokens."""
    counts = torch.bincount(
        heldout.ids[:, 1:][heldout.mask], minlength=grammar.tokenizer.vocab_size
    )
    p = counts.double() / counts.sum()
    return float(-(p[p > 0] * p[p > 0].log()).sum())


def ran_out(run: Training, seconds: float) -> tuple[str, str]:
    """(fault, why) for a model that learns with no fault showing: time or steps ran out."""
    first, last = float(np.mean(run.losses[:5])), float(np.mean(run.losses[-10:]))
    if run.elapsed > seconds:
        return "time ran out", tr(
            "time ran out while it was still learning (the loss fell from {first:.2f} to "
            "{last:.2f}); this machine took {ms:.0f} ms a step. Train longer: "
            "train_your_gpt1(parts, seconds={more:.0f})",
            first=first,
            last=last,
            ms=1000 * run.elapsed / max(run.done, 1),
            more=4 * seconds,
        )
    return "too slow", tr(
        "it learns, but {steps} steps were not enough (the loss fell from {first:.2f} "
        "to {last:.2f}). Train for more steps: train_your_gpt1(parts, steps={more})",
        steps=run.done,
        first=first,
        last=last,
        more=2 * run.done,
    )


@leaves_state_alone
def train_your_gpt1(
    parts: Parts, *, seconds: float = 60.0, steps: int = 400, goal: float = GOAL_KL, seed: int = 0
) -> CapstoneResult:
    """Train a GPT-1 assembled from `parts` on the grammar's sentences (one block of 64
    dimensions with 4 heads, batches of 256 given to the step in micro-batches of 128, Adam
    with warm-up and cosine decay, as notebook 08) until its exact KL(p ‖ p̂) per predicted
    held-out token is at most `goal`, or `steps` steps or `seconds` of training have passed.

    When it stops short it says why, naming only the learner's parts: one of them raised, or
    nbhelpers' own part raised on what they gave it;
    the forward pass returns no gradient or probabilities; the loss is not finite, below
    what any honest model reaches, climbing, flat, or stuck where the context is ignored;
    or time ran out while it was still learning (train longer). A part used without its
    checker (use_parts(..., checked=False)) has its checker's verdict added."""
    from ..corpus import JapaneseGrammar
    from ..experiments.heldout import make_heldout
    from ..experiments.pretraining import corpus_model_config

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
    if not parts.yours:
        return CapstoneResult(
            NOT_ATTEMPTED,
            [
                tr(
                    "… {exercise}: nothing of yours has passed its checker yet, so there is no "
                    "GPT-1 of yours to train. Finish the exercises, then give your parts to "
                    "use_parts.",
                    exercise="train_your_gpt1",
                )
            ],
        )
    grammar = JapaneseGrammar()
    heldout = make_heldout(grammar, n=500)
    torch.manual_seed(seed)
    try:
        model = parts.model(corpus_model_config(grammar))
    except PartRaised as raised:
        model, run = None, Training(raised=raised)
    else:
        run = train(
            model, parts, grammar, heldout, steps=steps, seconds=seconds, goal=goal, seed=seed
        )
    return verdict(run, parts, model, grammar, heldout, seconds=seconds, goal=goal)


def verdict(
    run: Training, parts: Parts, model, grammar, heldout, *, seconds: float, goal: float
) -> CapstoneResult:
    """What the run says: passed, or why it stopped short, naming only the learner's parts."""
    exercise = "train_your_gpt1"
    measured = (run.kl, run.done, run.elapsed, run.losses)
    if run.raised is not None:
        part, error = run.raised.part, first_line(run.raised.error)
        if part in parts.yours:
            suspected = [part]
            said = tr(
                "✗ {exercise}: your {part} raised {error}",
                exercise=exercise,
                part=part_name(part),
                error=error,
            )
        else:  # nbhelpers' own part raised on what the learner's parts gave it or returned
            suspected = list(parts.yours)
            said = tr(
                "✗ {exercise}: nbhelpers' own {part} raised {error}, on what your {inside} gave it",
                exercise=exercise,
                part=part_name(part),
                error=error,
                inside=listing(part_name(name) for name in suspected),
            )
        return CapstoneResult(
            FAILED,
            [said, *("  " + line for line in checkers_say(parts, suspected))],
            None,
            *measured[1:],
            "raised",
        )
    model.eval()
    yours = listing(part_name(name) for name in parts.yours)
    if run.fault is None and run.kl is not None and run.kl <= goal:
        notes = checkers_say(parts, parts.unchecked)  # it learned, bugs and all
        return CapstoneResult(
            PASSED,
            [
                tr(
                    "✓ {exercise}: your GPT-1 (yours: {yours}) reached KL(p ‖ p̂) = {kl:.3f} "
                    "nats per token ≤ {goal} after {steps} steps, {seconds:.0f} s of training",
                    exercise=exercise,
                    yours=yours,
                    kl=run.kl,
                    goal=goal,
                    steps=run.done,
                    seconds=run.elapsed,
                ),
                *("  " + tr("but: {note}", note=note) for note in notes),
            ],
            *measured,
        )
    stopped = tr(
        "✗ {exercise}: your GPT-1 (yours: {yours}) stopped at KL(p ‖ p̂) = {kl:.3f} nats "
        "per token after {steps} steps, {seconds:.0f} s (goal ≤ {goal})",
        exercise=exercise,
        yours=yours,
        kl=float("nan") if run.kl is None else run.kl,
        steps=run.done,
        seconds=run.elapsed,
        goal=goal,
    )
    fault, seen = run.fault, run.seen
    if fault is None:
        fault, seen = diagnosis(
            model,
            grammar,
            run.losses,
            heldout.ids,
            grammar.entropy_rate(),
            unigram_entropy(grammar, heldout),
        )
    if fault is None:  # it learns, and no fault shows: time or steps ran out
        fault, why = ran_out(run, seconds)
        lines = [stopped, "  " + why]
        lines += ["  " + line for line in checkers_say(parts, parts.unchecked)]
        return CapstoneResult(FAILED, lines, *measured, fault)
    lines = [stopped, "  " + tr("seen: {seen}", seen=seen)]
    lines += ["  " + tr("hint: {hint}", hint=question) for question in suspects(fault, parts)]
    named = ["forward"] if fault in FORWARD_FAULTS else list(suspect_questions().get(fault, {}))
    lines += ["  " + line for line in checkers_say(parts, named)]
    return CapstoneResult(FAILED, lines, *measured, fault)
