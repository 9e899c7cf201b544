"""Where a Japanese learner still meets English: the English words in the stored outputs of
the Japanese notebooks (and solutions), outside an allowlist of names that stay as they are
in every language (code identifiers, units, proper names).

    python tests/english_in_japanese.py          # counts per notebook, then every line
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parent.parent
JAPANESE = sorted([*(ROOT / "notebooks" / "ja").glob("*.ipynb"),
                   *(ROOT / "solutions" / "ja").glob("*.ipynb")])  # fmt: skip
# Words that are the same in every language: libraries and products, units, and the names
# of things a learner types (functions, arguments, dtypes, devices).
ALLOWED = {
    *"pytorch torch numpy jupyterlab gpt bpe utf cpu cuda gpu mps sdpa flash math einsum".split(),
    *"softmax float int bool dtype nan inf kib mib gib ms nats kl api png ok ids".split(),
    *"attention scaled_dot_product_attention nbhelpers tensor true false none yes".split(),
}
# The error figure of a check line keeps its English marker in every language (nbval.cfg
# sanitizes what follows it), and the first cell echoes the language it sets.
IGNORED = (re.compile(r"\|error\|"), re.compile(r"^env: NBHELPERS_LANG=\w+$"))
WORD = re.compile(r"(?<![\w.<])[A-Za-z][a-z]{2,}(?![\w(>])")


def output_texts(cell) -> list[str]:
    texts = []
    for output in cell.get("outputs", []):
        if output.get("output_type") == "stream":
            texts.append(output.get("text", ""))
        elif output.get("output_type") in ("execute_result", "display_data"):
            data = output.get("data", {})
            if "application/vnd.jupyter.widget-view+json" not in data:
                texts.append(data.get("text/plain", ""))
        elif output.get("output_type") == "error":
            texts.append(f"{output.get('ename')}: {output.get('evalue')}")
    return ["".join(t) if isinstance(t, list) else t for t in texts]


def english_lines(path: Path) -> list[tuple[str, str, list[str]]]:
    """(cell id, line, its English words) for every output line with an English word."""
    found = []
    for cell in nbformat.read(path, as_version=4).cells:
        if cell.cell_type != "code":
            continue
        for text in output_texts(cell):
            for line in text.splitlines():
                if line.startswith("<") and line.endswith(">"):  # an object's repr
                    continue
                for pattern in IGNORED:
                    line = pattern.sub("", line)
                words = [w for w in WORD.findall(line) if w.lower() not in ALLOWED]
                if words:
                    found.append((cell.get("id", "?"), line.strip(), words))
    return found


def main() -> int:
    total = 0
    report = []
    for path in JAPANESE:
        lines = english_lines(path)
        total += len(lines)
        print(f"{len(lines):4d}  {path.relative_to(ROOT)}")
        report += [f"{path.name} [{cell}] {line[:110]}" for cell, line, _ in lines]
    print(f"{total} output lines with English words; allowlist of {len(ALLOWED)} words")
    if "-v" in sys.argv:
        print("\n".join(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
