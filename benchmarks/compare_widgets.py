"""Widget redraw latency of this tree against an earlier commit, side by side in one run.

Machines differ by 2-3x, so a figure measured today cannot be set against one from another
day. This script checks the earlier commit out into a temporary git worktree and runs
`bench_widgets.py` in both trees alternately (old, new, old, new, ...), each in its own
process, then prints each explorer's best median from either tree and their ratio.

    python benchmarks/compare_widgets.py --against 5b37a69
    python benchmarks/compare_widgets.py --against HEAD~3 --rounds 3 --only AttentionExplorer
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# "  AttentionExplorer          temperature       31.6 ms  <= 50 ms: met"
# The editable install's import hook would hand every tree this checkout's nbhelpers: drop
# it, so that the tree on PYTHONPATH is the one imported.
# run_path does not put the script's folder on the path, as `python script.py` does: the
# benchmark's own modules (results, cli) come through PYTHONPATH instead.
ISOLATED = (
    "import runpy, sys; "
    "sys.meta_path[:] = [f for f in sys.meta_path if '__editable__' not in repr(f)]; "
    "sys.argv = sys.argv[1:]; "
    "runpy.run_path(sys.argv[0], run_name='__main__')"
)
ROW = re.compile(r"^  (?P<name>\S.*?)\s{2,}(?P<control>\S+)\s+(?P<ms>[\d.]+) ms")


def run_bench(tree: Path, repeats: int, only: list[str] | None) -> dict[str, float]:
    """{explorer: median ms} printed by `tree`'s bench_widgets.py, run with `tree` first on
    the import path so that its own nbhelpers is measured."""
    command = [sys.executable, "-c", ISOLATED, str(tree / "benchmarks" / "bench_widgets.py")]
    command += ["--repeats", str(repeats)]
    if only:
        command += ["--only", *only]
    path = os.pathsep.join([str(tree), str(tree / "benchmarks")])
    env = {**os.environ, "PYTHONPATH": path, "MPLBACKEND": "Agg"}
    done = subprocess.run(command, cwd=tree, env=env, capture_output=True, text=True)
    rows = map(ROW.match, done.stdout.splitlines())
    measured = {m["name"].strip(): float(m["ms"]) for m in rows if m}
    # exit code 1 with figures printed: a target missed; without them, a crash
    if done.returncode not in (0, 1) or not measured:
        raise RuntimeError(f"bench_widgets.py failed in {tree}:\n{done.stderr[-2000:]}")
    return measured


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--against", required=True, help="the earlier commit (any git ref)")
    parser.add_argument("--rounds", type=int, default=2, help="runs of each tree, alternated")
    parser.add_argument("--repeats", type=int, default=20, help="redraws per explorer per run")
    parser.add_argument("--only", nargs="*", default=None, help="explorer class names")
    args = parser.parse_args(argv)
    if args.rounds < 1:
        parser.error(f"--rounds must be at least 1, got {args.rounds}")

    with tempfile.TemporaryDirectory(prefix="compare_widgets_") as scratch:
        old_tree = Path(scratch) / "old"
        subprocess.run(
            ["git", "worktree", "add", "--detach", "-q", str(old_tree), args.against],
            cwd=ROOT, check=True,
        )  # fmt: skip
        try:
            best: dict[str, dict[str, float]] = {"old": {}, "new": {}}
            for _ in range(args.rounds):
                for label, tree in (("old", old_tree), ("new", ROOT)):
                    for name, ms in run_bench(tree, args.repeats, args.only).items():
                        best[label][name] = min(ms, best[label].get(name, float("inf")))
        finally:
            subprocess.run(
                ["git", "worktree", "remove", "--force", str(old_tree)], cwd=ROOT, check=False
            )

    names = [n for n in best["new"] if n in best["old"]]
    print(f"best of {args.rounds} alternated runs, median of {args.repeats} redraws each")
    print(f"  {'explorer':26} {args.against[:12]:>12} {'this tree':>10}  new / old")
    for name in names:
        old, new = best["old"][name], best["new"][name]
        print(f"  {name:26} {old:9.1f} ms {new:7.1f} ms  {new / old:6.2f}")
    for name in best["new"].keys() - best["old"].keys():
        print(f"  {name:26} {'(new)':>12} {best['new'][name]:7.1f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
