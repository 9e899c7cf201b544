"""Attention implementations side by side: median time and peak memory per sequence length.

    from scratch   nbhelpers.attention: softmax(QKᵀ/√d_k)V, materialising the n×n weights
    fast path      nbhelpers.scaled_dot_product_attention: checks its inputs, then F.sdpa
    sdpa           F.scaled_dot_product_attention called directly (torch picks the kernel)
    sdpa[kernel]   the same with only one kernel allowed (torch.nn.attention.sdpa_kernel)

The fast path's overhead is timed against calling F.sdpa directly with the same arguments,
the two interleaved so that a busy machine slows both alike. Target: within 10%.

    python benchmarks/bench_attention.py                 # the device get_device() picks
    python benchmarks/bench_attention.py --device cuda --n 1024 4096 16384
"""

from __future__ import annotations

import argparse
import sys

import results
import torch
import torch.nn.functional as F
from cli import add_run_options

from nbhelpers import attention, causal_mask, get_device, scaled_dot_product_attention
from nbhelpers.experiments.attention_timing import KERNELS, kernel_call
from nbhelpers.support.benchmarking import (
    format_bytes,
    format_seconds,
    memory_method,
    peak_memory,
    time_call,
    time_interleaved,
)
from nbhelpers.support.device import describe_environment

OVERHEAD_TARGET = 0.10
# Largest error against the float32 from-scratch result. Exceeding it fails the run in
# float32; in half precision it is only flagged, since the from-scratch path then rounds every
# step (its weights, near 1/n, lose precision at large n) and is expected to land further off.
TOLERANCE = {torch.float32: 1e-5, torch.bfloat16: 3e-2, torch.float16: 5e-3}


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default=None, help="cpu, cuda or mps (default: get_device())")
    parser.add_argument("--n", type=int, nargs="+", default=None, help="sequence lengths")
    parser.add_argument("--heads", type=int, default=4)
    parser.add_argument("--d-head", type=int, default=64)
    parser.add_argument("--dtype", choices=["float32", "float16", "bfloat16"], default=None)
    add_run_options(parser, repeats=5, what="the fast path")
    return parser.parse_args(argv)


def bench_length(n, args, device, dtype):
    """Print one table for sequence length n; return each implementation's (median seconds,
    peak bytes) and the fast path's overheads."""
    shape = (1, args.heads, n, args.d_head)
    generator = torch.Generator(device=device).manual_seed(n)
    Q, K, V = (torch.randn(shape, device=device, dtype=dtype, generator=generator) for _ in "qkv")
    reference, _ = attention(Q.float(), K.float(), V.float())
    contenders = {
        "from scratch": lambda: attention(Q, K, V)[0],
        "fast path": lambda: scaled_dot_product_attention(Q, K, V),
        "sdpa (torch's choice)": lambda: F.scaled_dot_product_attention(Q, K, V),
    }
    for name, backend in KERNELS.items():
        call = kernel_call(backend, Q, K, V)
        if call is not None:
            contenders[f"sdpa[{name}]"] = call
    print(f"\nn = {n}: Q, K, V of shape {shape}, {dtype}")
    print(f"  {'implementation':24} {'median':>10} {'peak memory':>12} {'max |error|':>12}")
    measured = {}
    for name, fn in contenders.items():
        error = float((fn().float() - reference).abs().max())
        flag = ""
        if not error <= TOLERANCE[dtype]:
            if dtype == torch.float32:
                raise AssertionError(
                    f"{name} at n={n}: max |error| {error:.2e} against the float32 "
                    f"from-scratch result exceeds {TOLERANCE[dtype]:.0e}"
                )
            flag = f"  (above {TOLERANCE[dtype]:.0e})"
        timing = time_call(fn, repeats=args.repeats, warmup=1, device=device)
        memory = peak_memory(fn, device)
        measured[name] = (timing.median, memory)
        print(
            f"  {name:24} {format_seconds(timing.median):>10} {format_bytes(memory):>12} "
            f"{error:>12.1e}{flag}"
        )
    # The overhead: interleaved pairs, with and without an additive causal mask.
    mask = causal_mask(n, device=device).to(dtype)
    pairs = {
        "no mask": (
            lambda: scaled_dot_product_attention(Q, K, V),
            lambda: F.scaled_dot_product_attention(Q, K, V),
        ),
        "causal additive mask": (
            lambda: scaled_dot_product_attention(Q, K, V, mask),
            lambda: F.scaled_dot_product_attention(Q, K, V, attn_mask=mask),
        ),
    }
    overheads = {}
    for label, (fast, direct) in pairs.items():
        timings = time_interleaved(
            {"fast": fast, "direct": direct}, repeats=2 * args.repeats + 1, device=device
        )
        overhead = timings["fast"].median / timings["direct"].median - 1
        overheads[label] = overhead
        print(
            f"  fast path vs sdpa directly, {label}: {format_seconds(timings['fast'].median)} vs "
            f"{format_seconds(timings['direct'].median)}: overhead {overhead:+.1%}"
        )
    return measured, overheads


def main(argv=None) -> int:
    args = parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    device = torch.device(args.device) if args.device else get_device()
    default_dtype = "float16" if device.type == "cuda" else "float32"
    dtype = getattr(torch, args.dtype or default_dtype)
    lengths = args.n or ([1024, 4096, 16384] if device.type == "cuda" else [256, 1024, 2048])
    print(describe_environment(device))
    print(f"timing: median of {args.repeats} runs after 1 warm-up (time.perf_counter)")
    print(f"peak memory: {memory_method(device)}")
    measured, overheads = {}, {}
    for n in lengths:
        measured[n], overheads[n] = bench_length(n, args, device, dtype)
    largest = max(lengths)
    worst = max(overheads[largest].values())
    verdict = "met" if worst <= OVERHEAD_TARGET else "MISSED"
    print(
        f"\nfast path overhead at n = {largest}: "
        + ", ".join(f"{label} {value:+.1%}" for label, value in overheads[largest].items())
        + f"; target <= {OVERHEAD_TARGET:.0%}: {verdict}"
    )
    shape = f"{args.heads} heads, d_k = {args.d_head}, {str(dtype).removeprefix('torch.')}"
    rows = [
        results.row(
            f"attention, n = {largest}, {shape}: {name}",
            f"{format_seconds(seconds)}, peak {format_bytes(memory)}",
        )
        for name, (seconds, memory) in measured[largest].items()
    ]
    rows.append(
        results.row(
            f"fast path's overhead against calling F.sdpa directly, n = {largest}",
            " / ".join(f"{label} {value:+.1%}" for label, value in overheads[largest].items()),
            f"<= {OVERHEAD_TARGET:.0%}",
            worst <= OVERHEAD_TARGET,
        )
    )
    results.write(args.json, __file__, rows, device)
    return 1 if args.strict and verdict != "met" else 0


if __name__ == "__main__":
    sys.exit(main())
