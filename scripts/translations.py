"""Keep the Japanese notebooks in step with the English ones.

Each English notebook `notebooks/X.ipynb` (or `solutions/X.ipynb`) has a Japanese edition
`notebooks/ja/X.ipynb` with the same cells in the same order and under the same cell ids:
- its code cells are the English program with Japanese words: string literals (the literal
  parts of f-strings included), comments and docstrings may differ, what runs may not
  (support/cell_code.py); the first one starts with LANGUAGE_LINE, so that nbhelpers' own
  words come out in Japanese too;
- each cell, markdown or code, records in its metadata the hash of the English cell it
  translates: {"translation": {"en_sha": "..."}}. When the English cell changes, even in a
  literal only, the hashes differ and `status` names the cell until it is re-translated
  (tests/test_translations.py fails on it).

    python scripts/translations.py status              # what needs (re-)translating; exit 1 if any
    python scripts/translations.py sync notebooks/02_softmax.ipynb
        # create or update the Japanese edition's structure: code copied from the English,
        # new markdown cells copied in English and marked untranslated, removed cells dropped
    python scripts/translations.py stamp notebooks/ja/02_softmax.ipynb CELL_ID ...
        # after translating cells: record the English hashes they now match (--all: every cell)
        # (a code cell whose code differs from the English is refused)
"""

from __future__ import annotations

import argparse
import hashlib
import re
import sys
from pathlib import Path

import nbformat

from nbhelpers.support.cell_code import first_difference, runnable_code

ROOT = Path(__file__).resolve().parent.parent
FOLDERS = ("notebooks", "solutions")
LANGUAGE = "ja"
LANGUAGE_LINE = "%env NBHELPERS_LANG=ja"
# Three English words in a row: prose, rather than a formula or a code name.
ENGLISH_WORDS = re.compile(r"[A-Za-z]{2,} [A-Za-z]{2,} [A-Za-z]{2,}")


def english_notebooks() -> list[Path]:
    return sorted(p for folder in FOLDERS for p in (ROOT / folder).glob("*.ipynb"))


def japanese_path(english: Path) -> Path:
    return english.parent / LANGUAGE / english.name


def english_path(japanese: Path) -> Path:
    return japanese.parent.parent / japanese.name


def shown(path: Path) -> str:
    """The path as the messages show it: relative to the repository when inside it."""
    try:
        return str(path.relative_to(ROOT))
    except ValueError:
        return str(path)


def source_hash(source: str) -> str:
    return hashlib.sha256(source.encode("utf-8")).hexdigest()[:16]


def first_line(cell) -> str:
    lines = [line for line in cell.source.splitlines() if line.strip()]
    return lines[0][:70] if lines else "(empty)"


def japanese_code(english_source: str, first: bool) -> str:
    return f"{LANGUAGE_LINE}\n{english_source}" if first else english_source


def same_code(english_source: str, japanese_source: str, first: bool) -> bool:
    """The Japanese cell runs the English code: the same code once literals, comments and
    docstrings are masked (and, in the first cell, the language line before it)."""
    if first and not japanese_source.startswith(LANGUAGE_LINE + "\n"):
        return False
    masked = runnable_code(japanese_source)
    return masked is not None and masked == runnable_code(english_source)


def side_by_side(english_source: str, japanese_source: str) -> str:
    """Where two cells' code differs: the English line over the Japanese line."""
    pair = first_difference(english_source, japanese_source)
    if pair is None:
        return "    (the first cell must start with the line " + LANGUAGE_LINE + ")"
    return f"    en: {pair[0]}\n    ja: {pair[1]}"


def problems(english_file: Path) -> list[str]:
    """What keeps the Japanese edition of `english_file` from matching it, one line each."""
    name = shown(english_file)
    japanese_file = japanese_path(english_file)
    if not japanese_file.exists():
        return [f"{name}: no Japanese edition {shown(japanese_file)}; run "
                f"`python scripts/translations.py sync {name}`"]  # fmt: skip
    english = nbformat.read(english_file, as_version=4)
    japanese = nbformat.read(japanese_file, as_version=4)
    where = shown(japanese_file)
    english_ids = [c.get("id") for c in english.cells]
    japanese_ids = [c.get("id") for c in japanese.cells]
    if english_ids != japanese_ids:
        return [
            f"{where}: its cells are not those of {name} (ids differ); run "
            f"`python scripts/translations.py sync {name}`"
        ]
    found = []
    code_cells = 0
    for en, ja in zip(english.cells, japanese.cells, strict=True):
        label = f"{where}, cell {en.get('id')} ({first_line(en)!r})"
        if en.cell_type != ja.cell_type:
            found.append(f"{label}: a {ja.cell_type} cell where the English has {en.cell_type}")
        elif en.cell_type == "code" and not same_code(en.source, ja.source, code_cells == 0):
            found.append(
                f"{label}: its code differs from the English notebook's\n"
                + side_by_side(en.source, ja.source)
            )
        elif en.cell_type in ("code", "markdown"):
            recorded = ja.metadata.get("translation", {}).get("en_sha")
            if recorded is None:
                found.append(f"{label}: not translated yet")
            elif recorded != source_hash(en.source):
                found.append(f"{label}: the English changed since it was translated")
            elif (
                en.cell_type == "markdown"
                and ja.source == en.source
                and ENGLISH_WORDS.search(en.source)
            ):
                found.append(f"{label}: marked as translated but still in English")
        code_cells += en.cell_type == "code"
    return found


def sync(english_file: Path) -> Path:
    """Create or update the Japanese edition's cells to match `english_file`'s."""
    english = nbformat.read(english_file, as_version=4)
    japanese_file = japanese_path(english_file)
    old, old_metadata = {}, {}
    if japanese_file.exists():
        previous = nbformat.read(japanese_file, as_version=4)
        old = {c.get("id"): c for c in previous.cells}
        old_metadata = previous.metadata
    cells, code_cells = [], 0
    for en in english.cells:
        kept = old.get(en.get("id"))
        if en.cell_type == "code":
            source = japanese_code(en.source, first=code_cells == 0)
            code_cells += 1
            if (
                kept is not None
                and kept.cell_type == "code"
                and same_code(en.source, kept.source, first=code_cells == 1)
            ):
                cell = kept  # keeps its outputs and its words; the hash says if they are stale
            else:
                cell = nbformat.v4.new_code_cell(source, metadata=dict(en.metadata))
                cell.metadata["translation"] = {"en_sha": None}
        elif kept is not None and kept.cell_type == en.cell_type:
            cell = kept  # its translation, stale or not: the hash says which
        else:
            cell = nbformat.v4.new_markdown_cell(en.source, metadata=dict(en.metadata))
            if en.cell_type == "markdown":
                cell.metadata["translation"] = {"en_sha": None}
        cell["id"] = en.get("id")
        cells.append(cell)
    # The English widget state would show English explorers until the notebook is executed,
    # and the figure texts `make notebooks` recorded are the Japanese run's: the Japanese
    # edition keeps its own (until it is executed again).
    KEPT = ("widgets", "nbhelpers")
    metadata = {k: v for k, v in english.metadata.items() if k not in KEPT}
    metadata |= {k: old_metadata[k] for k in KEPT if k in old_metadata}
    notebook = nbformat.v4.new_notebook(cells=cells, metadata=metadata)
    japanese_file.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(notebook, japanese_file)
    return japanese_file


def stamp(japanese_file: Path, cell_ids: list[str] | None) -> int:
    """Record, for the given cells (all when None), the English hash they now translate. A
    code cell whose code differs from the English cell's is refused."""
    english = {c.get("id"): c for c in nbformat.read(english_path(japanese_file), 4).cells}
    japanese = nbformat.read(japanese_file, as_version=4)
    unknown = set(cell_ids or ()) - set(english)
    if unknown:
        raise SystemExit(f"no cells {sorted(unknown)} in {english_path(japanese_file)}")
    stamped, code_cells = 0, 0
    for cell in japanese.cells:
        first, code_cells = code_cells == 0, code_cells + (cell.cell_type == "code")
        if cell.cell_type == "raw" or (cell_ids is not None and cell.get("id") not in cell_ids):
            continue
        en = english[cell.get("id")]
        if cell.cell_type == "code" and not same_code(en.source, cell.source, first):
            raise SystemExit(
                f"{japanese_file}, cell {cell.get('id')}: its code differs from the English\n"
                + side_by_side(en.source, cell.source)
            )
        cell.metadata["translation"] = {"en_sha": source_hash(en.source)}
        stamped += 1
    nbformat.write(japanese, japanese_file)
    return stamped


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("status", help="list the cells that need (re-)translating")
    sync_parser = commands.add_parser(
        "sync", help="match a Japanese edition's cells to the English"
    )
    sync_parser.add_argument("english", nargs="+", type=Path)
    stamp_parser = commands.add_parser("stamp", help="mark translated cells as up to date")
    stamp_parser.add_argument("japanese", type=Path)
    stamp_parser.add_argument("cells", nargs="*", help="cell ids (default with --all: every one)")
    stamp_parser.add_argument("--all", action="store_true", help="every cell")
    args = parser.parse_args(argv)

    if args.command == "status":
        found = [line for notebook in english_notebooks() for line in problems(notebook)]
        print("\n".join(found) if found else "every Japanese notebook is up to date")
        return 1 if found else 0
    if args.command == "sync":
        for english in args.english:
            print(f"wrote {shown(sync(english.resolve()))}")
        return 0
    if not args.cells and not args.all:
        parser.error("stamp: name the cells you translated, or pass --all")
    count = stamp(args.japanese.resolve(), None if args.all else args.cells)
    print(f"{args.japanese}: {count} cell(s) marked as translating the current English")
    return 0


if __name__ == "__main__":
    sys.exit(main())
