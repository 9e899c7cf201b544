"""Where a Japanese learner still meets English: the English words in the stored outputs of
the Japanese notebooks (and solutions), in the texts of every figure drawn while they ran
(`make notebooks` keeps those in each notebook's metadata), in the widgets' saved state
(descriptions, options, readouts, BrowserHeatmap's texts) and in the comments and docstrings
of their code cells, outside an allowlist of names that stay as they are in every language
(code identifiers, units, proper names).

    python tests/english_in_japanese.py          # counts per notebook and kind
    python tests/english_in_japanese.py -v       # then every line
"""

from __future__ import annotations

import ast
import io
import keyword
import re
import sys
import tokenize
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
    *"transformer vaswani radford linux python".split(),  # proper names
    *"passed failed".split(),  # an exercise's status, a value code compares with
    # Python's own (`raise NotImplementedError`), but not the keywords that are English words
    *(w.lower() for w in keyword.kwlist if w not in "and as else for from if in is not or with"),
}
# The first cell echoes the language it sets.
# A line that starts "torch: " quotes torch's own message, which is English everywhere; an
# exercise report starts with the name of the function the learner wrote (✓ embed: ...);
# text in quotes is a literal value ('abc'), in backquotes code (`scores`).
IGNORED = (
    re.compile(r"^env: NBHELPERS_LANG=\w+$"),
    re.compile(r"^torch: .*"),
    re.compile(r"^\s*[✓✗…!] \w+"),
    re.compile(r"'[^']*'"),
    re.compile(r"`[^`]*`"),
    # terms kept as they are
    re.compile(r"one-hot|pre-LN|post-LN|top-[kp]（nucleus）|top-[kp]|\d-gram"),
    re.compile(r"^\s*\(\w+\): "),  # a torch module's child in its repr: (attn): ...
    re.compile(r"\{[\w:.]+\}"),  # a {placeholder} the browser fills in (BrowserHeatmap)
    re.compile(r"d[^\s/]*/d\w+"),  # a derivative: dℓ/ds
    re.compile(r"(?<!\w)[0-9a-f]{2}(?=\s*/|\s*$)"),  # bytes in hexadecimal: e7 / 8a / ac
    re.compile(r"(?<!\w)[0-9a-f]{2}(?: [0-9a-f]{2})+(?!\w)"),  # and a run of them: e6 ad a9
)
# A word, not an identifier: not inside a name or a dotted path (model.W_e), not called, not
# a keyword argument (`Linear(in_features=8, bias=True)` is code in any language). Two
# letters are a word too ("of", "in", "vs").
WORD = re.compile(r"(?<![\w.<])[A-Za-z][a-z]{1,}(?![\w(>=]|\.\w)")
# Prose in a comment: two words in a row ("the scores"); a comment may name code (`heads`).
PHRASE = re.compile(r"(?<![\w.])[A-Za-z][a-z]+ +[a-z]{2,}(?![\w(])")
MATH = re.compile(r"\$[^$]*\$")  # mathtext in a figure: symbols, not words
# An HTML readout's markup, and its sub- and superscripts (o<sub>ij</sub>: symbols)
TAG = re.compile(r"<(su[bp])>[^<]*</\1>|<[^>]+>")
# What a learner sees of a saved widget: its label, its options, its readout's text, and the
# texts BrowserHeatmap draws in the browser.
WIDGET_TEXTS = ("description", "_options_labels", "value", "tooltip", "texts")
WIDGET_STATE = "application/vnd.jupyter.widget-state+json"
KINDS = ("output", "figure", "widget", "comment")


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


def widget_texts(notebook) -> list[str]:
    """The texts of every saved widget a learner reads (label, options, readout)."""
    texts = []
    for model in (
        notebook.metadata.get("widgets", {}).get(WIDGET_STATE, {}).get("state", {}).values()
    ):
        state = model.get("state", {})
        for key in WIDGET_TEXTS:
            value = state.get(key)
            if key == "value" and model.get("model_name") not in ("HTMLModel", "LabelModel"):
                continue  # a slider's number, an image's bytes
            values = value.values() if isinstance(value, dict) else value
            for text in [value] if isinstance(value, str) else (values or ()):
                if isinstance(text, str):
                    texts.append(TAG.sub(" ", text).replace("&nbsp;", " "))
    return texts


def code_words(source: str) -> list[str]:
    """The comments and docstrings of a code cell: what a learner reads as prose in code."""
    lines = ["" if line.lstrip().startswith(("%", "!")) else line for line in source.splitlines()]
    code = "\n".join(lines)
    texts = []
    try:
        for token in tokenize.generate_tokens(io.StringIO(code).readline):
            if token.type == tokenize.COMMENT:
                texts.append(token.string.lstrip("#").strip())
        tree = ast.parse(code)
    except (SyntaxError, tokenize.TokenError):
        return texts
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Module)):
            docstring = ast.get_docstring(node)
            if docstring:
                texts.append(docstring)
    return texts


def english_in(text: str, *, kind: str) -> list[tuple[str, list[str]]]:
    """(line, its English words) for every line of `text` with an English word."""
    found = []
    if kind == "figure":
        text = MATH.sub(" ", text)
    for line in text.splitlines():
        if kind == "output" and line.startswith("<") and line.endswith(">"):  # an object's repr
            continue
        if kind == "comment" and re.match(r"\s*(NBVAL_\w+|fmt: \w+|noqa\b)", line):
            continue  # a marker for the tools, not for the learner
        for pattern in IGNORED:
            line = pattern.sub("", line)
        words = [w for w in WORD.findall(line) if w.lower() not in ALLOWED]
        if kind == "comment" and not PHRASE.search(line):
            continue  # code names in a comment (`ids (..., n)`, `attn, ln_1`), not prose
        if words:
            found.append((line.strip(), words))
    return found


def english_lines(path: Path, kinds=KINDS) -> list[tuple[str, str, list[str]]]:
    """(cell id, line, its English words) for every line with an English word; a line that
    is not an output is marked with its kind ("figure: ...", "widget: ...", "comment: ...")."""
    found = []
    notebook = nbformat.read(path, as_version=4)
    drawn = figure_texts(notebook)
    if "widget" in kinds:
        for text in widget_texts(notebook):
            found += [
                ("widgets", f"widget: {line}", w) for line, w in english_in(text, kind="widget")
            ]
    for cell in notebook.cells:
        if cell.cell_type != "code":
            continue
        where = cell.get("id", "?")
        if "comment" in kinds:
            for text in code_words(cell.source):
                found += [
                    (where, f"comment: {line}", w) for line, w in english_in(text, kind="comment")
                ]
        if "figure" in kinds:
            for text in drawn.get(where, []):
                found += [
                    (where, f"figure: {line}", w) for line, w in english_in(text, kind="figure")
                ]
        if "output" in kinds:
            for text in output_texts(cell):
                found += [(where, line, w) for line, w in english_in(text, kind="output")]
    return found


def kind_of(line: str) -> str:
    head = line.split(":", 1)[0]
    return head if head in KINDS else "output"


def main() -> int:
    totals = dict.fromkeys(KINDS, 0)
    report = []
    for path in JAPANESE:
        lines = english_lines(path)
        counts = dict.fromkeys(KINDS, 0)
        for _, line, _ in lines:
            counts[kind_of(line)] += 1
        for kind in KINDS:
            totals[kind] += counts[kind]
        shown = "  ".join(f"{kind} {counts[kind]:3d}" for kind in KINDS)
        print(f"{len(lines):4d}  {shown}  {path.relative_to(ROOT)}")
        report += [f"{path.name} [{cell}] {line[:110]}" for cell, line, _ in lines]
    shown = ", ".join(f"{totals[kind]} {kind}" for kind in KINDS)
    total = sum(totals.values())
    print(f"{total} lines with English words ({shown}); allowlist of {len(ALLOWED)} words")
    if "-v" in sys.argv:
        print("\n".join(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
