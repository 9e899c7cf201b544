"""nbhelpers' own words and their catalogue (nbhelpers/locale/<lang>/LC_MESSAGES/nbhelpers.po).

The texts are found by Babel's own extractor, `pybabel extract` with the course's keywords:
`tr(text)`, `ntr(singular, plural, n)`, `N_(text)` (a text in a table, translated where it is
shown), `markup(text)` and `markup_n(singular, plural, n)`. The catalogue is written with
Babel's writer, in the order the code says the texts, without line wrapping, and with a
brace-format flag where a text has {placeholders}.

    python scripts/po.py update   # rewrite the catalogue from the code; list what is untranslated
    python scripts/po.py status   # only list; exit 1 if a text is untranslated
"""

from __future__ import annotations

import argparse
import string
import sys
from pathlib import Path

from babel.messages.catalog import Catalog
from babel.messages.extract import extract_from_dir
from babel.messages.pofile import read_po, write_po

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "nbhelpers"
CATALOGUE = PACKAGE / "locale" / "ja" / "LC_MESSAGES" / "nbhelpers.po"
KEYWORDS = {"tr": None, "N_": None, "markup": None, "ntr": (1, 2), "markup_n": (1, 2)}


def extracted() -> dict:
    """{text: "path:line" where the code first says it}, as `pybabel extract -k tr -k N_
    -k markup -k ntr:1,2 -k markup_n:1,2 nbhelpers` finds them; a text with plural forms is
    keyed (singular, plural)."""
    found: dict = {}
    for filename, line, message, _, _ in extract_from_dir(
        PACKAGE, method_map=[("**.py", "python")], keywords=KEYWORDS, comment_tags=()
    ):
        found.setdefault(message, f"nbhelpers/{filename}:{line}")
    return found


def has_fields(text: str | tuple) -> bool:
    """Whether the text (or any form of a text with plural forms) has {placeholders}."""
    forms = text if isinstance(text, tuple) else (text,)
    return any(
        name is not None for form in forms for _, name, _, _ in string.Formatter().parse(form)
    )


def read_catalogue(path: str | Path) -> dict:
    """{English: translation}; a text with plural forms is keyed by (singular, plural) and
    holds a tuple of translations, one per plural form."""
    with open(path, "rb") as file:
        return {message.id: message.string for message in read_po(file) if message.id}


def write_catalogue(path: str | Path, table: dict[str, str], *, comment: str, locale="ja"):
    catalogue = Catalog(
        locale=locale,
        header_comment=comment.rstrip("\n") + "\n",
        project="nbhelpers",
        version="1",
        msgid_bugs_address="the course's issue tracker",
        last_translator="the course's maintainers",
        language_team=f"{locale} edition of the course",
        fuzzy=False,
    )
    catalogue.revision_date = catalogue.creation_date
    for english, translated in table.items():
        flags = ("python-brace-format",) if has_fields(english) else ()
        message = catalogue.add(english, translated, flags=flags)
        # Babel flags a text with "%" as python-format ("90% grammatical"); the course
        # formats with braces, so say so, and `msgfmt -c` checks nothing that is not there.
        if "python-format" in message.flags:
            message.flags.discard("python-format")
            message.flags.add("no-python-format")
    with open(path, "wb") as file:
        write_po(file, catalogue, width=0, sort_output=False, include_lineno=False)


def header_comment(path: str | Path) -> str:
    """The comment lines at the top of a catalogue (what it holds), as they are written."""
    lines = []
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        if not line.startswith("#"):
            break
        lines.append(line)
    return "\n".join(lines)


def edit_catalogue(path: str | Path, changes: dict | None = None, added: dict | None = None):
    """Change a catalogue in place. `changes` is {old text: (new text, translation)}: the
    old text is replaced where it stood, a translation of None removes it. `added` is
    {text: translation}, appended at the end."""
    changes, added = changes or {}, added or {}
    table = read_catalogue(path)
    missing = [old for old in changes if old not in table]
    if missing:
        raise KeyError(f"{path}: no such texts {missing}")
    edited: dict = {}
    for english, translated in table.items():
        if english in changes:
            new, new_translation = changes[english]
            if new_translation is not None:
                edited[new] = new_translation
        else:
            edited[english] = translated
    write_catalogue(path, edited | added, comment=header_comment(path))


def update(path: Path = CATALOGUE) -> list:
    """Rewrite the catalogue from the code: every text the code says, in that order, with
    the translation it had; texts the code no longer says are dropped. Returns the texts
    that have no translation yet (written with an empty one)."""
    old = read_catalogue(path)
    table = {text: old.get(text, "") for text in extracted()}
    write_catalogue(path, table, comment=header_comment(path))
    return [text for text, translated in table.items() if not translated]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("command", choices=("update", "status"))
    args = parser.parse_args(argv)
    if args.command == "update":
        missing = update()
    else:
        table = read_catalogue(CATALOGUE)
        missing = [text for text in extracted() if not table.get(text)]
    for text in missing:
        print(f"untranslated: {text!r}")
    return 1 if missing and args.command == "status" else 0


if __name__ == "__main__":
    sys.exit(main())
