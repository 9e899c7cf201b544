"""Notebook 10's measurement: time and peak memory of one attention call, per sequence length,
for each way of computing it.

    (a) from scratch            nbhelpers.attention: the n x n weights are materialised
    (b) nbhelpers fast path     nbhelpers.scaled_dot_product_attention (F.sdpa underneath)
    (c) sdpa[kernel]            F.scaled_dot_product_attention with one kernel allowed

The lengths run from small to large until the next one would overrun a time budget.
benchmarks/bench_attention.py measures the same contenders at chosen sizes.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

from ..attention import attention, scaled_dot_product_attention
from ..memory import attention_memory, implementation_label
from ..support.benchmarking import (
    format_bytes,
    format_seconds,
    memory_method,
    peak_memory,
    time_call,
)
from ..support.language import pad, tr
from ..support.threads import cpu_threads
from ..support.validation import check_positive_int, is_number

KERNELS = {
    "flash": SDPBackend.FLASH_ATTENTION,
    "memory-efficient": SDPBackend.EFFICIENT_ATTENTION,
    "math": SDPBackend.MATH,
}
# which of attention_memory's estimates describes each contender
ESTIMATE_KEY = {
    "(a) from scratch": "(a) from scratch",
    "(b) nbhelpers fast path": "(b)/(c) flash",
    "(c) sdpa[flash]": "(b)/(c) flash",
    "(c) sdpa[memory-efficient]": "(b)/(c) flash",
    "(c) sdpa[math]": "(c) sdpa[math]",
}


def kernel_call(backend: SDPBackend, *args, **kwargs) -> Callable | None:
    """F.scaled_dot_product_attention restricted to one kernel, or None when that kernel
    cannot run these inputs on this device."""

    def call():
        with sdpa_kernel(backend):
            return F.scaled_dot_product_attention(*args, **kwargs)

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # "kernel not used because ..." is the answer here
            call()
    except RuntimeError:
        return None
    return call


def contenders(Q: torch.Tensor, K: torch.Tensor, V: torch.Tensor) -> dict[str, Callable]:
    """(a), (b), and (c) for every kernel that runs these inputs: name -> function."""
    found = {
        "(a) from scratch": lambda: attention(Q, K, V)[0],
        "(b) nbhelpers fast path": lambda: scaled_dot_product_attention(Q, K, V),
    }
    for name, backend in KERNELS.items():
        call = kernel_call(backend, Q, K, V)
        if call is not None:
            found[f"(c) sdpa[{name}]"] = call
    return found


def time_attention(
    lengths: Sequence[int],
    *,
    heads: int = 4,
    d_k: int = 64,
    device: torch.device | str = "cpu",
    budget_s: float = 8.0,
    threads: int | None = 1,
    report: Callable[[str], None] = print,
) -> dict[str, dict[str, list]]:
    """Median time (3 runs after a warm-up) and peak memory of one attention call on random
    (1, heads, n, d_k) inputs, for each n of `lengths` in turn and each contender; one
    `report` line per measurement, beside attention_memory's estimate. Stops before a
    length that would overrun `budget_s` seconds (each n costs about 4 times the last).
    Returns {contender: {"n": [...], "seconds": [...], "bytes": [...]}}; bytes is None
    where the device offers no way to measure memory."""
    for n in lengths:
        check_positive_int("lengths", n)
    check_positive_int("heads", heads)
    check_positive_int("d_k", d_k)
    if not is_number(budget_s) or not budget_s > 0:
        raise ValueError(
            tr("budget_s must be a positive number of seconds, got {value!r}", value=budget_s)
        )
    device = torch.device(device)
    results: dict[str, dict[str, list]] = {}
    report(
        tr(
            "peak memory: {method}; estimate: attention_memory(n, heads={heads})",
            method=memory_method(device),
            heads=heads,
        )
    )
    header = [
        pad("n", 5, ">"),
        pad(tr("implementation"), 26),
        pad(tr("median"), 10, ">"),
        pad(tr("peak memory"), 12, ">"),
        pad(tr("estimate"), 10, ">"),
    ]
    report(f"{header[0]}  {' '.join(header[1:])}")
    spent = 0.0
    for index, n in enumerate(lengths):
        Q, K, V = (torch.randn(1, heads, n, d_k, device=device) for _ in range(3))
        step_spent = 0.0
        for name, fn in contenders(Q, K, V).items():
            with cpu_threads(threads):
                timing = time_call(fn, repeats=3, warmup=1, device=device)
                memory = peak_memory(fn, device)
            step_spent += 5 * timing.median
            row = results.setdefault(name, {"n": [], "seconds": [], "bytes": []})
            row["n"].append(n)
            row["seconds"].append(timing.median)
            row["bytes"].append(memory)
            estimate = attention_memory(n, heads=heads)[ESTIMATE_KEY[name]]
            report(
                f"{n:5}  {pad(implementation_label(name), 26)} {format_seconds(timing.median):>10} "
                f"{format_bytes(memory):>12} {format_bytes(estimate):>10}"
            )
        spent += step_spent
        if index + 1 < len(lengths) and spent + 4 * step_spent > budget_s:
            report(
                tr(
                    "stopped after n = {n}: n = {next} would overrun the {budget:g} s budget "
                    "on this {device}",
                    n=n,
                    next=lengths[index + 1],
                    budget=budget_s,
                    device=device.type,
                )
            )
            break
    return results
