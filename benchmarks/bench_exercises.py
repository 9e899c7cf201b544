"""How long each exercise checker takes on its worked solution (target: <= 1 s each, the
first call in a fresh kernel included).

The solutions are the code cells tagged "solution" in solutions/*.ipynb, as the tests use.
Each checker's first call is timed in a fresh Python process of its own (after importing
torch and nbhelpers, as a learner's kernel has by then), then its warm median in this one.

    python benchmarks/bench_exercises.py [--repeats 3] [--strict]
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

import nbformat
import results
from cli import add_run_options

import nbhelpers.exercises as exercises

ROOT = Path(__file__).resolve().parent.parent
TARGET_S = 1.0


# Notebook 00 shows its checker on a throwaway function and has no solutions notebook.
TOUR_ANSWER = """
def my_normalised_rows(W):
    return W / W.sum(dim=-1, keepdim=True)
"""


def solutions() -> dict:
    names: dict = {}
    exec(TOUR_ANSWER, names)
    for path in sorted((ROOT / "solutions").glob("*_solutions.ipynb")):
        for cell in nbformat.read(path, as_version=4).cells:
            if "solution" in cell.get("metadata", {}).get("tags", []):
                exec(compile(cell.source, path.name, "exec"), names)
    return names


def answers() -> dict[str, str]:
    """{checker: the name of the answer the solutions notebooks give it}, read from their
    calls, check_verb_output(my_subject_and_place) say."""
    found = {"check_normalised_rows": "my_normalised_rows"}
    for path in sorted((ROOT / "solutions").glob("*_solutions.ipynb")):
        for cell in nbformat.read(path, as_version=4).cells:
            found.update(re.findall(r"\b(check_\w+)\((\w+)", cell.source))
    return found


FIRST_CALL = """
import time
from bench_exercises import solutions
import nbhelpers.exercises as exercises
answer = solutions()[{answer!r}]
checker = getattr(exercises, {checker!r})
start = time.perf_counter()
checker(answer)
print(time.perf_counter() - start)
"""


def first_call(checker: str, answer: str) -> float:
    """The checker's first call, in a fresh process: what a learner's first run costs."""
    code = FIRST_CALL.format(answer=answer, checker=checker)
    # this folder on the child's path, so that it imports this file's solutions()
    path = os.pathsep.join(filter(None, [str(Path(__file__).parent), os.environ.get("PYTHONPATH")]))
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "PYTHONPATH": path},
    )
    return float(done.stdout.strip().splitlines()[-1])


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_run_options(parser, repeats=3, what="a checker")
    args = parser.parse_args(argv)
    if args.threads:
        import torch

        torch.set_num_threads(args.threads)
    names, answers_by_checker = solutions(), answers()
    checkers = [getattr(exercises, name) for name in exercises.__all__ if name.startswith("check_")]
    print(
        f"{len(checkers)} checkers, each on its worked solution: the first call in a fresh "
        f"process, then the median of {args.repeats} warm runs"
    )
    timings = {}
    for checker in checkers:
        answer = answers_by_checker.get(checker.__name__)
        if answer not in names:
            print(f"  {checker.__name__}: no solution found", file=sys.stderr)
            return 1
        runs = []
        for _ in range(args.repeats):
            start = time.perf_counter()
            result = checker(names[answer])
            runs.append(time.perf_counter() - start)
        if not result:
            print(f"  {checker.__name__}: the solution does not pass:\n{result!r}", file=sys.stderr)
            return 1
        first = first_call(checker.__name__, answer)
        timings[checker.__name__] = max(first, statistics.median(runs))
        print(
            f"  {checker.__name__:32} first {first * 1e3:8.1f} ms"
            f"   warm {statistics.median(runs) * 1e3:8.1f} ms"
        )
    slowest = max(timings, key=timings.get)
    verdict = "met" if timings[slowest] <= TARGET_S else "MISSED"
    print(f"slowest: {slowest} {timings[slowest]:.2f} s (target <= {TARGET_S:g} s: {verdict})")
    what = f"the {len(checkers)} exercise checkers on their worked solutions, first call included"
    figure = f"slowest {slowest} {timings[slowest]:.2f} s"
    rows = [results.row(what, figure, f"<= {TARGET_S:g} s", verdict == "met")]
    results.write(args.json, __file__, rows)
    return 1 if args.strict and verdict == "MISSED" else 0


if __name__ == "__main__":
    sys.exit(main())
