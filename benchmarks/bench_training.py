"""Time for the small GPT to reach its target: mean KL(true ‖ model) <= 0.01 nats per token.

Trains the course's small model (`nbhelpers.training.corpus_model_config`) on the grammar
with `nbhelpers.train`, as notebook 08 does, and reports the training time (the
evaluations excluded, as `train` measures it) at the first evaluation that reaches the
target, plus the wall-clock time of the whole call. Target on the 2-core CPU: <= 30 s.

    python benchmarks/bench_training.py
    python benchmarks/bench_training.py --repeats 3 --steps 1500
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

import results
import torch
from cli import add_json_option

from nbhelpers import GPT1, get_device, seed_everything
from nbhelpers.support.device import describe_environment

KL_TARGET = 0.01
TIME_TARGET_S = 30.0


def load_training():
    try:
        from nbhelpers.corpus import JapaneseGrammar
        from nbhelpers.experiments.pretraining import corpus_model_config, train
    except ImportError as error:
        raise SystemExit(
            "bench_training needs nbhelpers.training (train, corpus_model_config) and "
            f"nbhelpers.corpus (JapaneseGrammar): {error}"
        ) from None
    return JapaneseGrammar, corpus_model_config, train


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default=None, help="cpu, cuda or mps (default: get_device())")
    parser.add_argument("--repeats", type=int, default=1, help="training runs (median)")
    parser.add_argument("--steps", type=int, default=None, help="default: train()'s default")
    parser.add_argument("--lr", type=float, default=None, help="default: train()'s default")
    parser.add_argument("--batch-size", type=int, default=None, help="default: train()'s")
    add_json_option(parser)
    return parser.parse_args(argv)


def main(argv=None) -> int:
    args = parse_args(argv)
    JapaneseGrammar, corpus_model_config, train = load_training()
    device = torch.device(args.device) if args.device else get_device()
    print(describe_environment(device))
    grammar = JapaneseGrammar()
    chosen = {"steps": args.steps, "lr": args.lr, "batch_size": args.batch_size}
    options = {name: value for name, value in chosen.items() if value is not None}
    arguments = "".join(f", {name}={value}" for name, value in options.items())
    print(f"each run: train(model, grammar{arguments}), train()'s defaults otherwise")
    to_target, wall = [], []
    for run in range(args.repeats):
        seed_everything(run)
        model = GPT1(corpus_model_config(grammar)).to(device)
        start = time.perf_counter()
        history = train(model, grammar, seed=run, progress=False, **options)
        wall.append(time.perf_counter() - start)
        reached = history.first_below(KL_TARGET)
        final_gap = history.heldout_loss[-1] - history.entropy_rate
        if reached is None:
            print(
                f"  run {run}: KL never reached {KL_TARGET} (last {history.kl[-1]:.4f} at step "
                f"{history.steps[-1]}); held-out loss - entropy rate = {final_gap:.4f} nats"
            )
            continue
        step, seconds = reached
        to_target.append(seconds)
        print(
            f"  run {run}: KL <= {KL_TARGET} at step {step} after {seconds:.1f} s of training; "
            f"final KL {history.kl[-1]:.4f}, held-out loss - entropy rate {final_gap:.4f} nats; "
            f"whole call {wall[-1]:.1f} s"
        )
    if not to_target:
        print(f"the target KL <= {KL_TARGET} was not reached in any run", file=sys.stderr)
        return 1
    median = statistics.median(to_target)
    verdict = "met" if median <= TIME_TARGET_S else "MISSED"
    print(
        f"time to KL <= {KL_TARGET}: median {median:.1f} s over {len(to_target)} run(s) "
        f"(training time; whole calls median {statistics.median(wall):.1f} s); "
        f"target <= {TIME_TARGET_S:.0f} s: {verdict}"
    )
    what = f"training the small GPT until KL(true ‖ model) <= {KL_TARGET} nats per token"
    figure = (
        f"{median:.1f} s of training, median of {len(to_target)} run(s) (whole train() call "
        f"{statistics.median(wall):.1f} s)"
    )
    rows = [results.row(what, figure, f"<= {TIME_TARGET_S:.0f} s", verdict == "met")]
    results.write(args.json, __file__, rows, device)
    return 0


if __name__ == "__main__":
    sys.exit(main())
