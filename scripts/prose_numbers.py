"""Numbers in the prose that no output shows: every number a markdown cell states (both
editions) is looked for among the numbers the notebook's stored outputs print and the
numbers its code cells write; what matches neither is listed, by notebook and cell.

A prose number matches an output or code number when they are equal at the prose's own
precision (0.85 matches a printed 0.853; 1.6·10⁻⁴ matches 1.6e-04). Small whole numbers
(0-20), years, references (§3.2, notebook 08, Table 5) and numbers inside code spans are
left out: they count things a reader can see, name a year or a place, or quote code.

    python scripts/prose_numbers.py [NOTEBOOK...]        # all course notebooks by default
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# 1.6 \cdot 10^{-4}, 1.6 \times 10^{-4}, 1.6·10⁻⁴, 1.6e-04, 10^{-3}, 40{,}478, 20,000, 0.85, 3
SUPERSCRIPT = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹⁻", "0123456789-")
NUMBER = re.compile(
    r"(?<![A-Za-z0-9_.^{])"  # not inside a name, a subscript or a superscript
    r"(?:(?P<mantissa>\d+(?:\.\d+)?)\s*(?:\\cdot|\\times|·|×)\s*)?"
    r"(?:10\^\{?(?P<exp1>[-−]?\d+)\}?|10(?P<exp2>[⁻⁰¹²³⁴⁵⁶⁷⁸⁹]+))"
    r"|(?<![A-Za-z0-9_.^{])(?P<plain>"
    r"\d{1,3}(?:(?:\{,\}|,|\\,|\u2009|\u202f| )\d{3}(?!\d))+(?:\.\d+)?"  # 40,478 or 65 504
    r"|\d+(?:\.\d+)?(?:e[-+]?\d+)?)"
    r"(?:\s*(?P<scale>million|万|億)|(?P<mega>M))?"
    r"(?![A-Za-z0-9_])"
)
SCALE = {"million": 1e6, "万": 1e4, "億": 1e8}
CODE_SPAN = re.compile(r"`[^`]*`")
# A number that names a place, not a quantity: §3.2, notebook 08, Table 5, sections 3.1
# to 3.3, Exercise 2, and the same in Japanese (ノートブック 08, 表 5, 演習 2).
REFERENCE = re.compile(
    r"(?:§\s*|\b(?:[Nn]otebooks?|[Tt]ables?|[Ff]igures?|[Ss]ections?|[Ee]xercises?|cells?)\s+"
    r"|(?:ノートブック|表|図|演習|節|セル)\s*)"
    r"\d+(?:\.\d+)?(?:\s*(?:to|and|or|–|-|〜|～|と|から)\s*(?:§\s*)?\d+(?:\.\d+)?)*"
    r"|\d+(?:\.\d+)+\s*節"  # 3.2.1 節
)


def numbers(text: str) -> list[tuple[str, float, float]]:
    """(as written, value, half a unit in its last place) for each number in `text`."""
    found = []
    for match in NUMBER.finditer(REFERENCE.sub(" ", CODE_SPAN.sub(" ", text))):
        written = match.group(0)
        if match.group("plain") is not None:
            plain = re.sub(r"\{,\}|\\,|[,\u2009\u202f ]", "", match.group("plain"))
            value = float(plain)
            mantissa_digits = plain.split("e")[0]
            decimals = len(mantissa_digits.split(".")[1]) if "." in mantissa_digits else 0
            exponent = int(plain.split("e")[1]) if "e" in plain else 0
            half = 0.5 * 10 ** (exponent - decimals)
            scale = SCALE.get(match.group("scale") or ("million" if match.group("mega") else ""))
            if scale:
                value, half = value * scale, half * scale
        else:
            exponent = int(
                (match.group("exp1") or match.group("exp2").translate(SUPERSCRIPT)).replace(
                    "−", "-"
                )
            )
            mantissa = match.group("mantissa") or "1"
            decimals = len(mantissa.split(".")[1]) if "." in mantissa else 0
            value = float(mantissa) * 10**exponent
            half = 0.5 * 10 ** (exponent - decimals)
        found.append((written.strip(), value, half))
    return found


def ignored(value: float, written: str) -> bool:
    """Small whole numbers and years: counts a reader sees, and dates."""
    whole = float(value).is_integer() and "." not in written and "10" not in written[:2]
    return whole and (0 <= value <= 20 or 1900 <= value <= 2100)


def output_texts(cell: dict) -> list[str]:
    texts = []
    for output in cell.get("outputs", []):
        if "text" in output:
            texts.append("".join(output["text"]))
        data = output.get("data", {})
        for kind in ("text/plain", "text/html", "text/markdown"):
            if kind in data:
                texts.append("".join(data[kind]))
    return texts


def known_values(notebook: dict) -> list[float]:
    """Every number the notebook's outputs print and its code writes."""
    values = []
    for cell in notebook["cells"]:
        if cell["cell_type"] != "code":
            continue
        for text in [*output_texts(cell), "".join(cell["source"])]:
            values += [value for _, value, _ in numbers(text.replace("−", "-"))]
    return values


def agrees(value: float, half: float, other: float) -> bool:
    """Whether `other` is `value` at the precision `half` (half a unit in the last place)."""
    return abs(abs(value) - abs(other)) <= half * (1 + 1e-9) + 1e-12 * max(1.0, abs(other))


def unmatched_numbers(path: Path) -> list[tuple[int, str, float, float]]:
    """(cell, as written, value, half a unit) for each prose number no output or code shows."""
    notebook = json.loads(path.read_text(encoding="utf-8"))
    known = sorted(set(known_values(notebook)))
    missing = []
    for index, cell in enumerate(notebook["cells"]):
        if cell["cell_type"] != "markdown":
            continue
        for written, value, half in numbers("".join(cell["source"])):
            if not ignored(value, written) and not any(agrees(value, half, k) for k in known):
                missing.append((index, written, value, half))
    return missing


def unmatched(path: Path) -> list[tuple[int, str]]:
    return [(index, written) for index, written, _, _ in unmatched_numbers(path)]


def main(paths: list[str]) -> int:
    notebooks = [Path(p).resolve() for p in paths] or sorted(
        [*ROOT.glob("notebooks/*.ipynb"), *ROOT.glob("notebooks/ja/*.ipynb")]
    )
    total = 0
    for path in notebooks:
        for index, written in unmatched(path):
            total += 1
            print(f"{path.relative_to(ROOT)} cell {index}: {written}")
    print(f"{total} prose numbers match no output and no code")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
