"""The capstone's confusion table: one part broken at a time (the usual mistakes of
tests/answers/, used without their checkers), trained by train_your_gpt1, and what its
verdict says: the fault it names and its first hint. The worked parts, stopped by a short
time limit, must be told that time ran out.

    PYTHONPATH=tests python scripts/capstone_diagnoses.py           # the whole table (minutes)
    PYTHONPATH=tests python scripts/capstone_diagnoses.py --quick   # faults before training

(PYTHONPATH=tests: the broken parts are the usual mistakes of tests/answers/.)

tests/test_capstone.py runs the quick rows and a few trained ones.
"""

from __future__ import annotations

import argparse
import time
from typing import NamedTuple

import torch
import torch.nn.functional as F

from answers.nb05 import fused_class
from answers.nb07 import block_class, gpt1_forward
from answers.nb08 import accumulated
from nbhelpers.exercises import train_your_gpt1, use_parts


def forward_without_gradients(model, ids):
    with torch.no_grad():
        return gpt1_forward()(model, ids)


def zero_grad_after_backward(model, optimizer, ids, pad_id, micro_batch):
    loss = F.cross_entropy(
        model(ids[:, :-1]).flatten(0, 1), ids[:, 1:].flatten(), ignore_index=pad_id
    )
    loss.backward()
    optimizer.zero_grad()
    optimizer.step()
    return loss.item()


def step_that_raises(model, optimizer, ids, pad_id, micro_batch):
    return model(ids)[:, :, 10_000].sum()  # an index past the vocabulary


class BlockThatRaises(block_class()):
    def forward(self, h):
        return self.ffn(h.transpose(-1, -2))  # (d, n) into a Linear of d inputs


class Broken(NamedTuple):
    part: str  # the part broken: attention, block, forward or step
    how: str
    answer: object
    fault: str | None = None  # the fault the verdict must name; None: whatever it says
    before: bool = False  # seen before any training

    @property
    def given(self) -> dict:
        return {self.part: self.answer}


BROKEN = [
    Broken("attention", "no causal mask", fused_class(mask=False), "sees the future"),
    Broken("attention", "the mask after softmax", fused_class(mask="after")),
    Broken("attention", "the diagonal masked too", fused_class(diagonal=0), "not finite"),
    Broken("attention", "divided by √d_model", fused_class(scale_by="d_model")),
    Broken("block", "no first residual", block_class(first_residual=False)),
    Broken("block", "pre-LN", block_class(order="pre")),
    Broken("block", "raises", BlockThatRaises, "raised", True),
    Broken("forward", "probabilities", gpt1_forward(output="probs"), "probabilities", True),
    Broken("forward", "under torch.no_grad()", forward_without_gradients, "no gradient", True),
    Broken("forward", "no W_p", gpt1_forward(positions=False)),
    Broken("forward", "the blocks skipped", gpt1_forward(blocks="none")),
    Broken(
        "forward", "the last position only", gpt1_forward(last_only=True), "forward output", True
    ),
    Broken("step", "targets not shifted", accumulated(shift=False), "targets not shifted"),
    Broken("step", "no zero_grad", accumulated(zero="none"), "loss climbs"),
    Broken("step", "zero_grad after backward", zero_grad_after_backward, "no learning"),
    Broken("step", "no optimizer.step()", accumulated(step="none"), "no learning"),
    Broken("step", "a step per micro-batch", accumulated(step="each")),
    Broken("step", "zero_grad inside the loop", accumulated(zero="each")),
    Broken("step", "the means of the micro-batches", accumulated(weighting="means")),
    Broken("step", "raises", step_that_raises, "raised", True),
]


def run(row: Broken, steps: int):
    started = time.perf_counter()
    parts = use_parts(**row.given, checked=False)
    result = train_your_gpt1(parts, steps=steps, seconds=float("inf"))
    hint = next((line.strip() for line in result.lines[1:]), "")
    return result, hint, time.perf_counter() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="the rows seen before training")
    parser.add_argument("--steps", type=int, default=400, help="the capstone's default")
    args = parser.parse_args()
    rows = [row for row in BROKEN if row.before or not args.quick]
    right = wrong = 0
    print(f"{'part':10} {'broken':32} {'fault named':22} {'expected':22} first line of the verdict")
    for row in rows:
        result, hint, seconds = run(row, args.steps)
        named = result.fault if not result else "passed"
        ok = named == (row.fault or named)  # None: what it names is reported, not expected
        right, wrong = right + ok, wrong + (not ok)
        print(f"{row.part:10} {row.how:32} {named:22} {row.fault or '(any)':22} {hint[:150]}"
              f"  [{seconds:.0f} s]")  # fmt: skip
    if not args.quick:
        solution = {name: value for name, value in _solution_parts().items()}
        result = train_your_gpt1(use_parts(**solution), seconds=2.0)
        named = result.fault if not result else "passed"
        ok = named == "time ran out"
        right, wrong = right + ok, wrong + (not ok)
        print(f"{'all':10} {'(worked parts, 2 s limit)':32} {named:22} {'time ran out':22} "
              f"{result.lines[-1].strip()[:150]}")  # fmt: skip
    print(f"{right} of {right + wrong} rows as expected")
    return 0 if wrong == 0 else 1


def _solution_parts() -> dict:
    from answers import solved

    names = solved()
    return {
        "attention": names["MyCausalMultiHead"],
        "block": names["MyGPT1Block"],
        "forward": names["my_gpt1_forward"],
        "step": names["my_accumulated_step"],
    }


if __name__ == "__main__":
    raise SystemExit(main())
