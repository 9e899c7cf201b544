"""Every number the prose states comes from a run: printed by the notebook's own code (so
nbval checks it), or listed in prose_numbers.toml with its source, where the test
recomputes it or cites the paper it comes from. Both editions, every markdown cell."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

import pytest
import tomllib

ROOT = Path(__file__).resolve().parent.parent

from prose_numbers import agrees, numbers  # noqa: E402
from prose_numbers import unmatched_numbers as _unmatched_numbers  # noqa: E402
from prose_sources import NAMESPACE  # noqa: E402

NOTEBOOKS = sorted(ROOT.glob("notebooks/[0-9][0-9]_*.ipynb"))
TABLE = tomllib.loads((Path(__file__).parent / "prose_numbers.toml").read_text(encoding="utf-8"))
ENTRIES = TABLE["number"]


def parsed(written: str) -> tuple[float, float]:
    """The value of a number as written, and half a unit of its precision; a whole number
    ending in zeros is rounded there (22,000 is 22 thousand, give or take 500)."""
    (found,) = numbers(written)
    _, value, half = found
    if value.is_integer() and half == 0.5 and value != 0:
        digits = str(int(abs(value)))
        half *= 10 ** (len(digits) - len(digits.rstrip("0")))
    return value, half


@cache
def unmatched_numbers(path: Path):
    return _unmatched_numbers(path)


@cache
def evaluated(expression: str):
    return eval(expression, dict(NAMESPACE))  # noqa: S307 (the expressions are ours)


def editions(notebook: Path) -> list[Path]:
    return [notebook, notebook.parent / "ja" / notebook.name]


def covering(number: str, value: float, half: float) -> list:
    listed = [entry["written"] for entry in ENTRIES if entry["notebook"] == number]
    return [written for written in listed if agrees(value, half, parsed(written)[0])]


@cache
def prose_numbers(path: Path) -> list[tuple[float, float]]:
    """(value, half a unit) of every number the markdown of `path` states."""
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    return [
        (value, half)
        for cell in cells
        if cell["cell_type"] == "markdown"
        for _, value, half in numbers("".join(cell["source"]))
    ]


def stated(notebook_number: str, written: str) -> bool:
    """Whether either edition of the notebook still states `written` in its prose (an entry
    keeps checking a number that an output happens to print as well)."""
    notebook = next(p for p in NOTEBOOKS if p.name.startswith(notebook_number))
    value, own_half = parsed(written)
    return any(  # equal at both precisions: a prose 0.01 does not keep a listed 0.0095
        agrees(v, half, value) and agrees(value, own_half, v)
        for path in editions(notebook)
        for v, half in prose_numbers(path)
    )


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=lambda p: p.name[:2])
def test_every_prose_number_is_printed_or_sourced(notebook):
    missing = [
        f"{path.relative_to(ROOT)} cell {cell}: {written}"
        for path in editions(notebook)
        for cell, written, value, half in unmatched_numbers(path)
        if not covering(notebook.name[:2], value, half)
    ]
    assert not missing, (
        "prose numbers that no output prints and prose_numbers.toml does not list:\n"
        + "\n".join(missing)
    )


@pytest.mark.slow  # some entries rerun a Try-it (sampling, deep stacks): make test, not make check
@pytest.mark.parametrize("entry", ENTRIES, ids=lambda e: f"{e['notebook']}:{e['written']}")
def test_each_listed_number_is_recomputed_or_cited(entry):
    kinds = {"value", "holds", "source"} & set(entry)
    assert len(kinds) == 1, f"{entry}: give exactly one of value, holds, source"
    written, half = parsed(entry["written"])
    if "value" in entry:
        got = float(evaluated(entry["value"]))
        assert agrees(written, half, got), (
            f"notebook {entry['notebook']} says {entry['written']}, "
            f"but {entry['value']} = {got:.6g}"
        )
    elif "holds" in entry:
        assert evaluated(entry["holds"]) is True, f"{entry['holds']} does not hold"
    else:
        assert len(entry["source"]) > 20, "a source names where the number comes from"
    # an entry no prose needs any more is removed, so the table stays what the prose says
    assert stated(entry["notebook"], entry["written"]), (
        f"notebook {entry['notebook']} no longer states {entry['written']}: remove the entry"
    )
