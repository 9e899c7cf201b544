"""Whole-course execution time and memory: every notebook in a fresh kernel on the CPU.

Each notebook runs with nbclient in memory (the files are not touched), with the same
environment as `make notebooks`: NBHELPERS_DEVICE=cpu, PYTHONHASHSEED=0, MPLBACKEND=Agg.
The time includes each kernel's start-up. Targets: the whole course (under pytest --nbval,
which does the same work plus the comparison) in at most 180 s on the 2-core CI machine;
every notebook's kernel at most 600 MiB of peak resident memory after running top to
bottom, so that a 32 GiB hub node holds 30 learners with a notebook open each.

    PYTHONPATH=scripts python benchmarks/bench_course.py            # all notebooks/*.ipynb
    PYTHONPATH=scripts python benchmarks/bench_course.py notebooks/10_attention_at_scale.ipynb
    PYTHONPATH=scripts python benchmarks/bench_course.py --nbval    # and `pytest --nbval`

(PYTHONPATH=scripts: it runs the notebooks with scripts/notebook_runner.py, as
`make notebooks` does.)
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import results
from cli import add_json_option
from notebook_runner import run_notebook

from nbhelpers.support.benchmarking import format_bytes

ROOT = Path(__file__).resolve().parent.parent
COURSE_TARGET_S = 180.0
MEMORY_TARGET = 600 * 2**20
CPU_ENV = {"NBHELPERS_DEVICE": "cpu", "PYTHONHASHSEED": "0", "MPLBACKEND": "Agg"}


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("notebooks", nargs="*", type=Path, help="default: notebooks/*.ipynb")
    parser.add_argument("--repeats", type=int, default=1, help="runs per notebook (median)")
    parser.add_argument("--timeout", type=int, default=600, help="seconds per cell")
    parser.add_argument(
        "--nbval", action="store_true", help="also time pytest --nbval over the same notebooks"
    )
    add_json_option(parser)
    return parser.parse_args(argv)


def figures(times: dict[str, float], peaks: dict[str, int]) -> list[dict]:
    """The table's rows: each notebook's time and peak memory, by its number."""
    if not times:
        return []
    number = {name: name.split("_", 1)[0] for name in times}
    each = ", ".join(f"{number[name]} {seconds:.1f}" for name, seconds in times.items())
    largest = max(peaks, key=peaks.get)
    memory = ", ".join(f"{number[name]} {peak / 2**20:.0f}" for name, peak in peaks.items())
    return [
        results.row(
            f"the {len(times)} notebooks, each in a fresh kernel, start-up included",
            f"{sum(times.values()):.1f} s in total; each, in s: {each}",
        ),
        results.row(
            "peak resident memory of each notebook's kernel after its last cell, MiB",
            f"largest {number[largest]} {format_bytes(peaks[largest])}; each: {memory}",
            f"<= {format_bytes(MEMORY_TARGET)}",
            peaks[largest] <= MEMORY_TARGET,
        ),
    ]


def main(argv=None) -> int:
    args = parse_args(argv)
    notebooks = args.notebooks or sorted((ROOT / "notebooks").glob("*.ipynb"))
    if not notebooks:
        print("no notebooks found", file=sys.stderr)
        return 1
    if args.repeats < 1:
        print(f"--repeats must be >= 1, got {args.repeats}", file=sys.stderr)
        return 2
    print(f"executing {len(notebooks)} notebooks, fresh kernel each, {CPU_ENV}")
    print(f"median of {args.repeats} run(s) per notebook, kernel start-up included;")
    print("memory: the kernel's peak resident set size after the last cell (largest run)")
    failed, peaks, times = [], {}, {}
    for path in notebooks:
        try:
            runs = [
                run_notebook(path, env=CPU_ENV, timeout=args.timeout, measure_memory=True)
                for _ in range(args.repeats)
            ]
        except Exception as error:  # a failing cell: report it, carry on, fail at the end
            failed.append(path.name)
            first_line = str(error).strip().splitlines()[-1] if str(error).strip() else ""
            print(f"  {path.name:45} FAILED: {type(error).__name__}: {first_line}")
            continue
        median = statistics.median(seconds for _, seconds, _ in runs)
        peaks[path.name] = max(peak for _, _, peak in runs)
        times[path.name] = median
        print(f"  {path.name:45} {median:7.1f} s  peak {format_bytes(peaks[path.name]):>9}")
    print(
        f"  {'total':45} {sum(times.values()):7.1f} s  "
        f"(target for the course under nbval: <= {COURSE_TARGET_S:.0f} s)"
    )
    if peaks:
        name, largest = max(peaks.items(), key=lambda item: item[1])
        verdict = "met" if largest <= MEMORY_TARGET else "MISSED"
        print(
            f"  largest peak: {name} {format_bytes(largest)} "
            f"(target <= {format_bytes(MEMORY_TARGET)} per notebook: {verdict})"
        )
    if args.nbval:
        command = [
            sys.executable, "-m", "pytest", "--nbval", "--nbval-current-env",
            "--nbval-sanitize-with", str(ROOT / "tests" / "nbval.cfg"), "-q",
            *map(str, notebooks),
        ]  # fmt: skip
        start = time.perf_counter()
        result = subprocess.run(command, cwd=ROOT, env={**os.environ, **CPU_ENV})
        elapsed = time.perf_counter() - start
        verdict = "met" if elapsed <= COURSE_TARGET_S else "MISSED"
        print(
            f"pytest --nbval over the same notebooks: {elapsed:.1f} s (target <= "
            f"{COURSE_TARGET_S:.0f} s: {verdict}), exit code {result.returncode}"
        )
        if result.returncode:
            failed.append("pytest --nbval")
    rows = figures(times, peaks)
    if args.nbval:
        what = f"pytest --nbval over the {len(notebooks)} notebooks, one process"
        figure = f"{elapsed:.0f} s, exit code {result.returncode}"
        target = f"<= {COURSE_TARGET_S:.0f} s"
        rows.append(results.row(what, figure, target, elapsed <= COURSE_TARGET_S))
    if not failed:
        results.write(args.json, __file__, rows)
    if failed:
        print(f"{len(failed)} notebook(s) failed: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
