"""The README's performance table is made from what the benchmarks wrote, and says where and
when: these tests fail when the two drift apart or a benchmark stops writing its figures."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

import performance_table  # noqa: E402
import results  # noqa: E402

MACHINE = {"cpu": "Some CPU", "cores": 2, "torch": "2.13.0+cpu", "threads": 2, "device": "cpu"}


def record(script: str, *rows, machine=MACHINE, date="2026-12-02") -> dict:
    return {"script": script, "command": script, "date": date, "machine": machine, "rows": rows}


def test_the_readme_table_is_the_one_made_from_the_results_files():
    done = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "performance_table.py"), "--check"],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr


def test_a_row_shows_its_figure_target_verdict_machine_and_date():
    records = [
        record("bench_kv_cache.py", results.row("generation", "3.6x", ">= 3x", True)),
        record("bench_training.py", results.row("training", "31 s", "<= 30 s", False)),
        record(
            "bench_attention.py",
            results.row("attention | n = 2048", "9 ms"),
            machine={**MACHINE, "device": "cuda", "gpu": "Some GPU"},
        ),
    ]
    lines = performance_table.table(records).splitlines()
    assert "| generation | 3.6x | >= 3x: met | A, 2026-12-02 (`bench_kv_cache.py`) |" in lines
    assert (
        "| training | 31 s | <= 30 s: **missed** | A, 2026-12-02 (`bench_training.py`) |" in lines
    )
    assert "| attention \\| n = 2048 | 9 ms | — | B, 2026-12-02 (`bench_attention.py`) |" in lines
    assert "A: Some CPU, 2 cores, torch 2.13.0+cpu." in lines
    assert "B: Some GPU (CUDA) beside Some CPU, 2 cores, torch 2.13.0+cpu." in lines
    assert not any("No GPU figures" in line for line in lines)


def test_the_table_follows_the_course_order_and_says_when_no_gpu_was_measured(tmp_path):
    for script in ("bench_course.py", "bench_attention.py", "bench_zzz.py"):
        row = results.row(script, "1 s")
        path = tmp_path / f"{script}.json"
        path.write_text(json.dumps(record(script, row)), encoding="utf-8")
    loaded = performance_table.load(tmp_path)
    assert [r["script"] for r in loaded] == [
        "bench_attention.py",
        "bench_course.py",
        "bench_zzz.py",
    ]
    assert "No GPU figures yet" in performance_table.table(loaded)


def test_writing_replaces_only_what_lies_between_the_markers():
    text = f"before\n{performance_table.BEGIN}\nold\n{performance_table.END}\nafter\n"
    updated = performance_table.replace_block(text, "new")
    assert updated == f"before\n{performance_table.BEGIN}\nnew\n{performance_table.END}\nafter\n"
    with pytest.raises(SystemExit, match="markers"):
        performance_table.replace_block("no markers here", "new")


def test_a_benchmark_writes_its_figures_with_the_machine_and_the_date(tmp_path):
    """The cheapest benchmark, run as `make benchmarks` runs it, with --json."""
    path = tmp_path / "kv_cache.json"
    command = [
        sys.executable, str(ROOT / "benchmarks" / "bench_kv_cache.py"), "--threads", "1",
        "--repeats", "1", "--prompt", "4", "--new-tokens", "8", "--json", str(path),
    ]  # fmt: skip
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    written = json.loads(path.read_text(encoding="utf-8"))
    assert written["script"] == "bench_kv_cache.py"
    assert written["machine"]["cores"] >= 1 and written["machine"]["torch"]
    assert written["date"].count("-") == 2
    [row] = written["rows"]
    assert "tokens/s" in row["figure"] and row["target"] == ">= 3x"
    assert isinstance(row["met"], bool)
