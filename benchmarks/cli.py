"""The command-line options every benchmark script shares."""

from __future__ import annotations

import argparse


def add_json_option(parser: argparse.ArgumentParser) -> None:
    """--json PATH: also write the figures there (see results.py)."""
    parser.add_argument(
        "--json",
        default=None,
        metavar="PATH",
        help="also write the figures to PATH as JSON (scripts/performance_table.py reads them)",
    )


def add_run_options(parser: argparse.ArgumentParser, *, repeats: int, what: str) -> None:
    """--repeats, --threads, --strict (exit 1 when `what` misses its target) and --json."""
    parser.add_argument("--repeats", type=int, default=repeats, help="measured runs (median)")
    parser.add_argument(
        "--threads", type=int, default=None, help="CPU threads (default: torch's choice)"
    )
    parser.add_argument(
        "--strict", action="store_true", help=f"exit 1 when {what} misses its target"
    )
    add_json_option(parser)
