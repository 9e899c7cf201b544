"""One notation (notebooks/NOTATION.md), checked where a machine can: the forms the source
texts use and the course does not (head_1 … head_h, W^O, h_n, V for the vocabulary, h for
the number of heads), and labels that count positions, heads or layers from 1. Read in
every notebook (markdown and code, both editions), the solutions, the READMEs, nbhelpers'
source and its catalogues."""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

# the NOTATION.md row each form breaks -> the form
FORBIDDEN = {
    "heads are head_0 … head_{n_h-1}": re.compile(
        r"head\}?_\{?1\}?\s*(?:…|\\dots|\.\.\.|,\s*\\dots)"  # head_1 … (from 1)
        r"|head\}?_\{?(?:h|n_h)\}?(?![\w\s−-])|head\}?_\{h ?- ?1\}"  # … head_h, head_{h-1}
    ),
    "the output projection is W_O": re.compile(r"(?<![_\w])W\^\{?O\}?"),
    "the last block's output is h_L": re.compile(r"(?<![\w\\])h_n(?!\w)"),
    "the vocabulary size is n_vocab (V is the values)": re.compile(
        r"vocabulary(?: size)? \$?V\b|\bV = len\(|\bV ?= ?\d+(?: tokens|,|\))|\(V, d\)|\bV=\{"
        r"|vocab_size=V\b"
    ),
    "the number of heads is n_h": re.compile(r"\bh heads\b|\$h\$ heads|\(\.\.\., h[,|]"),
}

# Where a form is quoted on purpose: the tables that set the course's notation beside the
# source texts' (00's "Notation" table and 07's note on the paper's symbols).
QUOTED = {("notebooks/00_tour.ipynb", 18), ("notebooks/07_gpt1_transformer_block.ipynb", 0)}


def texts():
    """(where, cell or 0, text) for everything a learner reads."""
    for path in sorted(
        [
            *ROOT.glob("notebooks/*.ipynb"),
            *ROOT.glob("notebooks/ja/*.ipynb"),
            *ROOT.glob("solutions/*.ipynb"),
            *ROOT.glob("solutions/ja/*.ipynb"),
        ]
    ):
        name = path.relative_to(ROOT).as_posix()
        english = name.replace("/ja/", "/")
        for index, cell in enumerate(json.loads(path.read_text(encoding="utf-8"))["cells"]):
            if (english, index) not in QUOTED:
                yield name, index, "".join(cell["source"])
    for path in [
        ROOT / "README.md",
        ROOT / "README.ja.md",
        *sorted(ROOT.glob("nbhelpers/**/*.py")),
        *sorted(ROOT.glob("nbhelpers/locale/ja/LC_MESSAGES/*.po")),
    ]:
        yield path.relative_to(ROOT).as_posix(), 0, path.read_text(encoding="utf-8")


def test_no_source_text_notation_where_the_course_has_its_own():
    found = [
        f"{name}:{index}: {rule}: ...{text[max(0, m.start() - 40) : m.end() + 20]!r}"
        for name, index, text in texts()
        for rule, form in FORBIDDEN.items()
        for m in form.finditer(text)
    ]
    assert not found, "\n".join(found)


def one_based_labels(source: str) -> list[str]:
    """Texts made with `tr` or an f-string that add 1 to an index before showing it."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) in ("tr", "ntr"):
            values = [keyword.value for keyword in node.keywords]
        elif isinstance(node, ast.JoinedStr):
            values = [part.value for part in node.values if isinstance(part, ast.FormattedValue)]
        else:
            continue
        for value in values:
            if (
                isinstance(value, ast.BinOp)
                and isinstance(value.op, ast.Add)
                and isinstance(value.right, ast.Constant)
                and value.right.value == 1
            ):
                found.append(f"line {node.lineno}: {ast.unparse(node)[:80]}")
    return found


@pytest.mark.parametrize(
    "path", sorted(ROOT.glob("nbhelpers/**/*.py")), ids=lambda p: p.relative_to(ROOT).as_posix()
)
def test_labels_count_from_0(path):
    found = one_based_labels(path.read_text(encoding="utf-8"))
    assert not found, f"{path.name}: positions, heads and layers are counted from 0:\n" + "\n".join(
        found
    )


def test_the_checks_can_fail():
    assert FORBIDDEN["heads are head_0 … head_{n_h-1}"].search("Concat(head_1…head_h)W_O")
    assert not FORBIDDEN["heads are head_0 … head_{n_h-1}"].search(
        r"\mathrm{Concat}(\mathrm{head}_0, \mathrm{head}_1), head_0 … head_{n_h - 1}"
    )
    assert FORBIDDEN["the vocabulary size is n_vocab (V is the values)"].search("(V={V}, d)")
    assert not FORBIDDEN["the vocabulary size is n_vocab (V is the values)"].search(
        "Q, K, V = X @ W_Q, X @ W_K, X @ W_V"
    )
    assert one_based_labels('tr("head {k}", k=i + 1)')
    assert not one_based_labels('tr("head {k}", k=i)')


def test_the_japanese_notation_page_translates_the_current_english_one():
    """notebooks/ja/NOTATION.md records the hash of the English page it translates, as each
    Japanese markdown cell does (scripts/translations.py): when the English page changes,
    this fails until the translation is brought up to date and its hash recorded."""
    from translations import source_hash

    english = (ROOT / "notebooks/NOTATION.md").read_text(encoding="utf-8")
    japanese = (ROOT / "notebooks/ja/NOTATION.md").read_text(encoding="utf-8")
    recorded = re.search(r"en_sha: ([0-9a-f]{16})", japanese.splitlines()[0])
    assert recorded and recorded[1] == source_hash(english), (
        "notebooks/NOTATION.md changed since notebooks/ja/NOTATION.md translated it: update the "
        f"translation and record en_sha: {source_hash(english)} on its first line"
    )

    def rows(text):  # the table rows of each section: the same symbols, in the same order
        return [line.count("|") for line in text.splitlines() if line.startswith("| ")]

    assert rows(japanese) == rows(english)
