"""GPT1's forward pass against a minimal reference with the same weights.

The reference is what nanoGPT would write: embeddings, then per block q, k, v, one call of
F.scaled_dot_product_attention(is_causal=True), the output projection, the post-LN residuals
and the feed-forward layer, with no argument checks. GPT1 adds its checks once per call and
must otherwise take the same path. Target: GPT1 / reference <= 1.05 on the CPU.

    python benchmarks/bench_gpt1_forward.py [--threads 1] [--repeats 7] [--device cpu]
"""

from __future__ import annotations

import argparse
import statistics
import sys

import results
import torch
import torch.nn.functional as F
from cli import add_run_options
from torch.utils.benchmark import Timer

from nbhelpers import GPT1, GPT1Config
from nbhelpers.support.device import describe_environment

TARGET = 1.05


def reference_forward(model: GPT1, ids: torch.Tensor) -> torch.Tensor:
    """The same function as model(ids), written straight through with the model's weights."""
    h = model.W_e(ids) + model.W_p[: ids.shape[-1]]
    heads = model.config.n_heads
    for block in model.blocks:
        attn = block.attn
        B, n, d = h.shape
        q, k, v = (
            W(h).view(B, n, heads, d // heads).transpose(1, 2)
            for W in (attn.W_Q, attn.W_K, attn.W_V)
        )
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        y = attn.W_O(y.transpose(1, 2).reshape(B, n, d))
        h = block.ln_1(h + y)
        h = block.ln_2(h + block.ffn(h))
    return h @ model.W_e.weight.T


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cpu")
    add_run_options(parser, repeats=7, what="GPT1's forward")
    args = parser.parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    device = torch.device(args.device)
    torch.manual_seed(0)
    config = GPT1Config(vocab_size=512, n_ctx=512, d_model=256, n_layers=2, n_heads=4)
    model = GPT1(config).to(device).eval()
    ids = torch.randint(0, config.vocab_size, (4, 512), device=device)
    print(describe_environment(device))
    threads = torch.get_num_threads()
    print(f"GPT1 forward, d = 256, 4 heads, 2 layers, n = 512, batch 4, {threads} thread(s)")
    with torch.no_grad():
        error = float((model(ids) - reference_forward(model, ids)).abs().max())
    print(f"same logits: max |GPT1 - reference| = {error:.1e}")
    if not error <= 1e-4:
        print("the two forwards disagree", file=sys.stderr)
        return 1
    # Timer does the warm-up, the thread setting and CUDA synchronisation; alternating rounds
    # expose both to the same drift of a shared machine, so the ratio is fair.
    names = {"model": model, "ids": ids, "reference_forward": reference_forward}
    statements = {"GPT1": "model(ids)", "reference": "reference_forward(model, ids)"}
    timers = {
        name: Timer(stmt, globals=names, num_threads=threads) for name, stmt in statements.items()
    }
    runs = {name: [] for name in timers}
    with torch.no_grad():
        for timer in timers.values():
            timer.timeit(2)  # warm-up
        for _ in range(args.repeats):
            for name, timer in timers.items():
                runs[name].append(timer.timeit(3).median)
    medians = {name: statistics.median(values) for name, values in runs.items()}
    for name, seconds in medians.items():
        print(f"  {name:10} {seconds * 1e3:8.2f} ms (median of {args.repeats} rounds of 3)")
    ratio = medians["GPT1"] / medians["reference"]
    verdict = "met" if ratio <= TARGET else "MISSED"
    print(f"GPT1 / reference = {ratio:.3f} (target <= {TARGET}: {verdict})")
    what = (
        "GPT1's forward against a minimal reference with the same weights and "
        f"F.sdpa(is_causal=True), d = 256, 4 heads, 2 layers, n = 512, batch 4, {threads} thread(s)"
    )
    figure = (
        f"ratio {ratio:.3f} ({medians['GPT1'] * 1e3:.1f} / {medians['reference'] * 1e3:.1f} ms), "
        "same logits"
    )
    rows = [results.row(what, figure, f"<= {TARGET}", verdict == "met")]
    results.write(args.json, __file__, rows, device)
    return 1 if args.strict and ratio > TARGET else 0


if __name__ == "__main__":
    sys.exit(main())
