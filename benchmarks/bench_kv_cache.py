"""Greedy generation with and without the key/value cache: tokens per second.

Both generators produce 256 new tokens from the same prompt with the same small GPT1; the
script first checks that they choose the same tokens. Target on the CPU: the cache at least
3× faster than recomputing everything at every step.

    python benchmarks/bench_kv_cache.py
    python benchmarks/bench_kv_cache.py --d-model 128 --layers 4 --threads 1 --repeats 5
"""

from __future__ import annotations

import argparse
import sys

import results
import torch
from cli import add_run_options

from nbhelpers import GPT1, GPT1Config, get_device, seed_everything
from nbhelpers.inference import (
    check_cache_agrees,
    generate_with_cache,
    generate_without_cache,
)
from nbhelpers.kv_cache import KVCache
from nbhelpers.support.benchmarking import format_bytes, format_seconds, time_interleaved
from nbhelpers.support.device import describe_environment

SPEED_UP_TARGET = 3.0


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default=None, help="cpu, cuda or mps (default: get_device())")
    parser.add_argument("--new-tokens", type=int, default=256)
    parser.add_argument("--prompt", type=int, default=8, help="prompt length")
    # The course's small GPT (nbhelpers.training.corpus_model_config) with a longer context.
    parser.add_argument("--vocab", type=int, default=40)
    parser.add_argument("--d-model", type=int, default=64)
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--heads", type=int, default=4)
    add_run_options(parser, repeats=3, what="the cache")
    return parser.parse_args(argv)


def main(argv=None) -> int:
    args = parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    device = torch.device(args.device) if args.device else get_device()
    seed_everything(0)
    config = GPT1Config(
        vocab_size=args.vocab,
        n_ctx=args.prompt + args.new_tokens,
        d_model=args.d_model,
        n_layers=args.layers,
        n_heads=args.heads,
    )
    model = GPT1(config).to(device).eval()
    prompt = torch.randint(0, args.vocab, (args.prompt,), device=device)
    print(describe_environment(device))
    print(
        f"model: {config.n_layers} layers, d_model {config.d_model}, {config.n_heads} heads, "
        f"vocab {config.vocab_size}; prompt {args.prompt} tokens, {args.new_tokens} new tokens"
    )
    check_cache_agrees(model, prompt, args.new_tokens)
    timings = time_interleaved(
        {
            "recompute": lambda: generate_without_cache(model, prompt, args.new_tokens),
            "cached": lambda: generate_with_cache(model, prompt, args.new_tokens),
        },
        repeats=args.repeats,
        warmup=1,
        device=device,
    )
    print(f"timing: median of {args.repeats} runs after 1 warm-up (time.perf_counter)")
    rates = {name: args.new_tokens / timing.median for name, timing in timings.items()}
    for name, timing in timings.items():
        print(f"  {name:10} {format_seconds(timing.median):>9}  {rates[name]:8.1f} tokens/s")
    speed_up = timings["recompute"].median / timings["cached"].median
    cache_bytes = KVCache(model, 1, config.n_ctx).nbytes
    print(f"  cache memory at {config.n_ctx} positions: {format_bytes(cache_bytes)}")
    verdict = "met" if speed_up >= SPEED_UP_TARGET else "MISSED"
    print(f"cached is {speed_up:.1f}x faster; target >= {SPEED_UP_TARGET:.0f}x: {verdict}")
    what = (
        f"greedy generation of {args.new_tokens} new tokens, GPT ({config.n_layers} layers, "
        f"d = {config.d_model}, {config.n_heads} heads), {torch.get_num_threads()} thread(s): "
        "KV cache against recomputing"
    )
    figure = (
        f"{rates['cached']:,.0f} vs {rates['recompute']:,.0f} tokens/s: {speed_up:.1f}x, "
        "same tokens"
    )
    rows = [results.row(what, figure, f">= {SPEED_UP_TARGET:.0f}x", verdict == "met")]
    results.write(args.json, __file__, rows, device)
    return 1 if args.strict and verdict != "met" else 0


if __name__ == "__main__":
    sys.exit(main())
