"""How many CPU threads torch uses for a block of code.

A small model gains nothing from a second thread, and on a shared CPU threads that wait for
each other can slow every step down many times over: the course's training runs use one.
"""

from __future__ import annotations

import contextlib

import torch

from .language import tr
from .validation import is_int


def check_cpu_threads(cpu_threads) -> None:
    """A positive int, or None (leave torch's setting as it is)."""
    if cpu_threads is not None and (not is_int(cpu_threads) or cpu_threads < 1):
        raise ValueError(
            tr(
                "cpu_threads must be a positive int or None, got {cpu_threads!r}",
                cpu_threads=cpu_threads,
            )
        )


@contextlib.contextmanager
def cpu_threads(count: int | None):
    """Run the block with torch using `count` CPU threads (None: leave them), then restore."""
    check_cpu_threads(count)
    previous = torch.get_num_threads()
    if count is not None:
        torch.set_num_threads(count)
    try:
        yield
    finally:
        torch.set_num_threads(previous)
