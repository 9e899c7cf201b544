"""The language of the course's own words: figure labels, explorer readouts, checker reports.

English is the default and is written in the code itself, as gettext does: `tr("query i")`
returns the text in the current language. The translations are gettext catalogues, keyed by
the English text: nbhelpers/locale/<language>/LC_MESSAGES/*.po, one for nbhelpers' own words
and one per notebook for the words its code prints. They are read with Babel the first time
a text is translated. A text missing from them falls back to English
(tests/test_language.py lists what is missing and fails). A third language is a new folder
of catalogues and a new code in LANGUAGES; no notebook changes.

    nbhelpers.set_language("ja")     # in a notebook, or
    NBHELPERS_LANG=ja jupyter lab    # for every kernel (`make lab-ja` does this)

A text with `{placeholders}` is formatted after translation, so a translation may put the
values in another order: tr("{n} heads", n=4) -> "4 個のヘッド". A text whose words follow a
count has plural forms, as gettext's ngettext: ntr("{n} head", "{n} heads", n).

Titles and labels that a notebook passes to a figure builder (`title="self-attention
weights"`) are the notebook's words, not nbhelpers': the builders pass them through
`translate`, and the table holds them too, so that the Japanese edition, whose code is the
English code, draws them in Japanese.
"""

from __future__ import annotations

import functools
import os
from pathlib import Path

LANGUAGES = ("en", "ja")
ENVIRONMENT_VARIABLE = "NBHELPERS_LANG"
LOCALE = Path(__file__).resolve().parent.parent / "locale"
_chosen: str | None = None  # set_language's choice; None: the environment variable decides


def _check(code) -> str:
    if code not in LANGUAGES:
        raise ValueError(
            tr("language must be one of {LANGUAGES}, got {code!r}", LANGUAGES=LANGUAGES, code=code)
        )
    return code


def set_language(code: str | None) -> None:
    """Use `code` ("en" or "ja") from now on; None goes back to NBHELPERS_LANG (or English).

    Figures and explorers built before the call keep the words they were built with."""
    global _chosen
    _chosen = None if code is None else _check(code)


def language() -> str:
    """The language in use: set_language's choice, else NBHELPERS_LANG, else "en"."""
    if _chosen is not None:
        return _chosen
    code = os.environ.get(ENVIRONMENT_VARIABLE, "").strip() or "en"
    if code not in LANGUAGES:
        raise ValueError(
            f"the environment variable {ENVIRONMENT_VARIABLE} must be one of {LANGUAGES}, "
            f"got {code!r}"
        )
    return code


@functools.cache
def catalogue(code: str) -> dict:
    """{English: translation} from every catalogue of `code` (English has none). A text
    with plural forms is keyed by (singular, plural) and holds one translation per form."""
    from babel.messages.pofile import read_po  # only when a translation is first needed

    table: dict = {}
    for path in sorted((LOCALE / code / "LC_MESSAGES").glob("*.po")):
        with open(path, "rb") as file:
            table |= {message.id: message.string for message in read_po(file) if message.id}
    return table


@functools.cache
def plural_form(code: str):
    """n -> the index of n's plural form in `code`'s catalogues (gettext's Plural-Forms)."""
    import gettext

    from babel.messages.pofile import read_po

    paths = sorted((LOCALE / code / "LC_MESSAGES").glob("*.po"))
    if not paths:  # English: "1 head", "2 heads"
        return lambda n: 0 if n == 1 else 1
    with open(paths[0], "rb") as file:
        return gettext.c2py(read_po(file).plural_expr)


def translate(text):
    """A caller's text (a title, a label) in the current language, if the table has it;
    anything else (None, a number, an untranslated text) comes back unchanged."""
    if isinstance(text, str):
        return catalogue(language()).get(text, text) or text
    return text


def tr(text: str, /, **values) -> str:
    """`text` in the current language (English when untranslated), formatted with `values`."""
    translated = catalogue(language()).get(text, text) or text
    return translated.format(**values) if values else translated


def ntr(singular: str, plural: str, n: int, /, **values) -> str:
    """gettext's ngettext: the form of the text that fits the count `n` ("1 head",
    "2 heads"; Japanese has one form), formatted with `values` and with n itself."""
    code = language()
    forms = catalogue(code).get((singular, plural))
    if forms and all(forms):
        text = forms[min(plural_form(code)(n), len(forms) - 1)]
    else:  # untranslated: English's two forms
        text = singular if n == 1 else plural
    return text.format(n=n, **values)


def width(text: str) -> int:
    """Columns `text` takes in a monospaced output: 2 for a wide (CJK) character, 1 else."""
    import unicodedata

    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)


def pad(text, columns: int, align: str = "<") -> str:
    """`text` padded with spaces to `columns` columns ("<" left, ">" right), counting a
    Japanese character as two, so that a printed table lines up in any language."""
    text = str(text)
    fill = " " * max(columns - width(text), 0)
    return text + fill if align == "<" else fill + text


def listing(items, /) -> str:
    """Items as the course's language lists them: "a, b" in English, 「a、b」 in Japanese."""
    return tr(", ").join(map(str, items))


def before_word(text: str, /) -> str:
    """`text` ready to stand before a word of the course's language: in Japanese, followed by
    the space that goes between Latin letters or digits and Japanese ("F.softmax の"), and by
    none after a Japanese character or bracket ("一から計算の"); in English, unchanged."""
    if language() == "ja" and text and text[-1].isascii() and not text[-1].isspace():
        return text + " "
    return text
