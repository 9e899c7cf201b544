"""Write a gettext catalogue the way the course keeps them (nbhelpers/locale/<lang>/LC_MESSAGES/
*.po): Babel's writer, entries in the order given, no line wrapping, a brace-format flag
where the text has {placeholders}.

    from po import write_catalogue
    write_catalogue(path, {"query i": "クエリ i"}, comment="...")
    write_catalogue(path, {("{n} head", "{n} heads"): ("{n} 個のヘッド",)}, comment="...")
"""

from __future__ import annotations

import string
from pathlib import Path

from babel.messages.catalog import Catalog
from babel.messages.pofile import read_po, write_po


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
