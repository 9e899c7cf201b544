"""The command-line options every benchmark script shares."""

from __future__ import annotations

import argparse


def add_run_options(parser: argparse.ArgumentParser, *, repeats: int, what: str) -> None:
    """--repeats, --threads and --strict (exit 1 when `what` misses its target)."""
    parser.add_argument("--repeats", type=int, default=repeats, help="measured runs (median)")
    parser.add_argument(
        "--threads", type=int, default=None, help="CPU threads (default: torch's choice)"
    )
    parser.add_argument(
        "--strict", action="store_true", help=f"exit 1 when {what} misses its target"
    )
