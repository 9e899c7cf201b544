"""Where a Japanese learner still meets English: the English words in the stored outputs of
the Japanese notebooks (and solutions), and in the texts of every figure drawn while they
ran (`make notebooks` keeps those in each notebook's metadata), outside an allowlist of
names that stay as they are in every language (code identifiers, units, proper names).

    python tests/english_in_japanese.py          # counts per notebook, then every line
"""

from __future__ import annotations

import keyword
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
    *"cos sin log exp diag argmax argmin logsumexp autograd eps tanh".split(),  # math
    *"view transpose reshape contiguous meta concat".split(),  # torch's methods, devices
    *"transformer vaswani radford linux".split(),  # proper names
    *"passed failed".split(),  # an exercise's status, a value code compares with
    *(word.lower() for word in keyword.kwlist),  # Python's own: `raise NotImplementedError`
}
# The error figure of a check line keeps its English marker in every language (nbval.cfg
# sanitizes what follows it), and the first cell echoes the language it sets.
# A line that starts "torch: " quotes torch's own message, which is English everywhere; an
# exercise report starts with the name of the function the learner wrote (✓ embed: ...);
# text in quotes is a literal value ('abc'), in backquotes code (`scores`).
IGNORED = (
    re.compile(r"\|error\|"),
    re.compile(r"^env: NBHELPERS_LANG=\w+$"),
    re.compile(r"^torch: .*"),
    re.compile(r"^\s*[✓✗…!] \w+"),
    re.compile(r"'[^']*'"),
    re.compile(r"`[^`]*`"),
    re.compile(r"one-hot|pre-LN|post-LN|top-[kp]（nucleus）|top-[kp]"),  # terms kept as they are
    re.compile(r"^\s*\(\w+\): "),  # a torch module's child in its repr: (attn): ...
)
# A word, not an identifier: not inside a name or a dotted path (model.W_e), not called, not
# a keyword argument (`Linear(in_features=8, bias=True)` is code in any language).
WORD = re.compile(r"(?<![\w.<])[A-Za-z][a-z]{2,}(?![\w(>=]|\.\w)")
MATH = re.compile(r"\$[^$]*\$")  # mathtext in a figure: symbols, not words


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


def figure_texts(notebook) -> dict[str, list[str]]:
    """{cell id: the texts of the figures it drew}, as `make notebooks` recorded them."""
    return notebook.metadata.get("nbhelpers", {}).get("figure_texts", {})


def english_lines(path: Path) -> list[tuple[str, str, list[str]]]:
    """(cell id, line, its English words) for every output line with an English word; a
    figure's text is marked "figure: ..."."""
    found = []
    notebook = nbformat.read(path, as_version=4)
    drawn = figure_texts(notebook)
    for cell in notebook.cells:
        if cell.cell_type != "code":
            continue
        for text in drawn.get(cell.get("id"), []):
            for line in MATH.sub(" ", text).splitlines():
                for pattern in IGNORED:
                    line = pattern.sub("", line)
                words = [w for w in WORD.findall(line) if w.lower() not in ALLOWED]
                if words:
                    found.append((cell.get("id", "?"), f"figure: {line.strip()}", words))
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
