"""A printed table whose columns line up in any language: `print(table(rows, header))`.

A monospaced output gives a Japanese character two columns, so padding by `len` misaligns
every row that holds one; this counts display columns instead. Numbers (and texts that read
as numbers, such as "0.912" or "1,024") go to the right, everything else to the left.
"""

from __future__ import annotations

import numbers
import re
import unicodedata

# "0.912", "-3.1e-05", "1,024", "12.5%", "3.4x", "2.0 倍": a number, perhaps with a unit mark
_NUMBER = re.compile(r"[-+−]?[\d,]*\.?\d+(e[-+]?\d+)?\s?(%|x|×|倍)?", re.IGNORECASE)


def width(text: str) -> int:
    """Columns `text` takes in a monospaced output: 2 for a wide (CJK) character, 1 else."""
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)


def _is_number(cell) -> bool:
    if isinstance(cell, numbers.Number) or hasattr(cell, "item"):
        return True
    return isinstance(cell, str) and _NUMBER.fullmatch(cell.strip()) is not None


def table(rows, header=(), *, gap: int = 2) -> str:
    """`rows` (each a sequence of cells) as aligned text, under `header` if one is given.

    A cell is shown with str(); format numbers first (f"{x:.3f}") for a fixed precision.
    A column is right-aligned when every cell below the header is a number."""
    rows = [list(row) for row in rows]  # any iterable of rows, read once
    body = [[str(c) for c in row] for row in rows]
    lines = ([list(map(str, header))] if header else []) + body
    columns = max(len(line) for line in lines)
    right = [
        all(_is_number(row[j]) for row in rows if j < len(row) and str(row[j]) != "")
        for j in range(columns)
    ]
    widths = [max(width(line[j]) for line in lines if j < len(line)) for j in range(columns)]
    out = []
    for line in lines:
        cells = []
        for j, text in enumerate(line):
            fill = " " * (widths[j] - width(text))
            cells.append(fill + text if right[j] else text + fill)
        out.append((" " * gap).join(cells).rstrip())
    return "\n".join(out)
