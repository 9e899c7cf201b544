"""Write a gettext catalogue the way the course keeps them (nbhelpers/locale/<lang>/LC_MESSAGES/
*.po): Babel's writer, entries in the order given, no line wrapping, a brace-format flag
where the text has {placeholders}.

    from po import write_catalogue
    write_catalogue(path, {"query i": "クエリ i"}, comment="...")
"""

from __future__ import annotations

import string
from pathlib import Path

from babel.messages.catalog import Catalog
from babel.messages.pofile import read_po, write_po


def has_fields(text: str) -> bool:
    return any(name is not None for _, name, _, _ in string.Formatter().parse(text))


def read_catalogue(path: str | Path) -> dict[str, str]:
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
