"""The README's performance table, made from what the benchmarks wrote (benchmarks/results).

Each `benchmarks/bench_*.py --json PATH` writes its figures with the machine and the date
(benchmarks/results.py); `make benchmarks` writes them all to benchmarks/results/. This
script turns those files into the table between the two markers in README.md, so the table
says only what was measured, where and when.

    python scripts/performance_table.py            # print the table
    python scripts/performance_table.py --write    # put it into README.md
    python scripts/performance_table.py --check    # exit 1 if README.md's table differs
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results"
README = ROOT / "README.md"
BEGIN = (
    "<!-- performance table: made by scripts/performance_table.py from "
    "benchmarks/results/*.json; do not edit by hand -->"
)
END = "<!-- end of the performance table -->"
# The table's order: the formulas, the model, the widgets, the course, the exercises.
ORDER = ("attention", "gpt1_forward", "kv_cache", "training", "widgets", "browser", "course")


def load(folder: Path = RESULTS) -> list[dict]:
    """Every results file in `folder`, in the table's order (others last, by name)."""
    records = [json.loads(path.read_text(encoding="utf-8")) for path in folder.glob("*.json")]

    def rank(record):
        stem = Path(record["script"]).stem.removeprefix("bench_")
        place = ORDER.index(stem) if stem in ORDER else len(ORDER)
        return place, stem, record["machine"]["device"]

    return sorted(records, key=rank)


def describe(machine: dict) -> str:
    """A machine in words: its CPU (or GPU), cores and torch."""
    where = f"{machine['cpu']}, {machine['cores']} cores, torch {machine['torch']}"
    if machine.get("gpu"):
        where = f"{machine['gpu']} (CUDA) beside {where}"
    return where


def cell(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def table(records: list[dict]) -> str:
    """The markdown table and, under it, the machines it was measured on."""
    machines: list[str] = []
    lines = [
        "| what was measured | figure | target | machine, date (script) |",
        "|---|---|---|---|",
    ]
    for record in records:
        where = describe(record["machine"])
        if where not in machines:
            machines.append(where)
        label = chr(ord("A") + machines.index(where))
        source = f"{label}, {record['date']} (`{record['script']}`)"
        for row in record["rows"]:
            target = row.get("target") or "—"
            if row.get("met") is not None:
                target += ": met" if row["met"] else ": **missed**"
            lines.append(
                f"| {cell(row['what'])} | {cell(row['figure'])} | {cell(target)} | {source} |"
            )
    if not records:
        lines.append("| nothing measured yet: run `make benchmarks` | | | |")
    if machines:
        lines += ["", *(f"{chr(ord('A') + i)}: {where}." for i, where in enumerate(machines))]
    if not any(record["machine"]["device"] == "cuda" for record in records):
        lines += ["", "No GPU figures yet: `make gpu-check` adds them on a machine with CUDA."]
    return "\n".join(lines)


def replace_block(text: str, block: str) -> str:
    """`text` with what lies between BEGIN and END replaced by `block`."""
    start, end = text.find(BEGIN), text.find(END)
    if start < 0 or end < start:
        raise SystemExit(f"README.md lacks the markers {BEGIN!r} ... {END!r}")
    return text[: start + len(BEGIN)] + "\n" + block + "\n" + text[end:]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    action = parser.add_mutually_exclusive_group()
    action.add_argument("--write", action="store_true", help="write the table into README.md")
    action.add_argument("--check", action="store_true", help="exit 1 if README.md differs")
    args = parser.parse_args(argv)
    block = table(load())
    if not (args.write or args.check):
        print(block)
        return 0
    text = README.read_text(encoding="utf-8")
    updated = replace_block(text, block)
    if args.check:
        if updated != text:
            print(
                "README.md's performance table differs from benchmarks/results/*.json: "
                "run python scripts/performance_table.py --write",
                file=sys.stderr,
            )
            return 1
        return 0
    README.write_text(updated, encoding="utf-8")
    print(f"README.md: performance table of {len(block.splitlines())} lines written")
    return 0


if __name__ == "__main__":
    sys.exit(main())
