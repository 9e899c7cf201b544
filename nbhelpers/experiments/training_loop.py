"""The course's one training loop. Pre-training (notebook 08), its capstone, fine-tuning
(notebook 11) and the two-head runs (notebook 05) all step through `run`; they differ only in
their batches, in how one step turns a batch into an update, and in what they measure.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable, Iterable

import torch


def adam(parameters, lr_at: Callable[[int], float]):
    """Adam whose rate at step s (0-based) is lr_at(s): the optimiser's own rate is 1, so
    LambdaLR's factor is the rate itself. Returns (optimizer, schedule)."""
    optimizer = torch.optim.Adam(parameters, lr=1.0)
    return optimizer, torch.optim.lr_scheduler.LambdaLR(optimizer, lr_at)


def descend(optimizer: torch.optim.Optimizer, loss: torch.Tensor) -> torch.Tensor:
    """One gradient step on `loss`: clear the old gradients, backward, step."""
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    optimizer.step()
    return loss.detach()


def run(
    batches: Iterable,
    update: Callable,
    schedule: torch.optim.lr_scheduler.LRScheduler,
    after: Callable[[int, object, float], bool] | None = None,
) -> float:
    """For each batch, update(batch) takes one optimiser step and returns its loss; then the
    schedule moves on and after(step, loss, seconds) may measure and returns True to stop.
    `seconds` counts drawing the batches and updating, not what `after` measures; run returns
    its total."""
    seconds, start = 0.0, time.perf_counter()
    for step, batch in enumerate(batches, 1):
        loss = update(batch)
        with warnings.catch_warnings():  # a learner's step that never calls optimizer.step()
            warnings.simplefilter("ignore")  # is diagnosed by its flat loss, not warned of
            schedule.step()
        seconds += time.perf_counter() - start
        if after is not None and after(step, loss, seconds):
            break
        start = time.perf_counter()
    return seconds
