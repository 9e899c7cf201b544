"""What a benchmark measured, as JSON beside what it prints: `--json PATH` writes it, and
scripts/performance_table.py builds the README's performance table from those files, so the
table cannot drift from what was measured."""

from __future__ import annotations

import datetime
import json
import os
import platform
import sys
from pathlib import Path

import torch


def cpu_name() -> str:
    """The CPU's model name (Linux's /proc/cpuinfo), else what platform knows."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def machine(device: torch.device | str = "cpu") -> dict:
    """Where a figure was measured: enough to tell two machines apart in the table."""
    device = torch.device(device)
    found = {
        "cpu": cpu_name(),
        "cores": os.cpu_count(),
        "torch": torch.__version__,
        "threads": torch.get_num_threads(),
        "device": device.type,
    }
    if device.type == "cuda":
        found["gpu"] = torch.cuda.get_device_name(device)
    return found


def row(what: str, figure: str, target: str | None = None, met: bool | None = None) -> dict:
    """One line of the table: what was measured, the figure, and the target if there is one."""
    return {"what": what, "figure": figure, "target": target, "met": met}


def write(path: str | Path | None, script: str, rows: list[dict], device="cpu") -> None:
    """Write `rows` measured by `script` on this machine to `path` (nothing when None)."""
    if path is None:
        return
    record = {
        "script": Path(script).name,
        "command": " ".join([Path(script).name, *sys.argv[1:]]),
        "date": datetime.date.today().isoformat(),
        "machine": machine(device),
        "rows": rows,
    }
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(record, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    print(f"figures written to {path}")
