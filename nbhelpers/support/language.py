"""The language of nbhelpers' own words: figure labels, explorer readouts, checker reports.

English is written in the code itself, as gettext does: `tr("query i")` returns the text in
the current language. The translations are gettext catalogues keyed by the English text
(nbhelpers/locale/<language>/LC_MESSAGES/nbhelpers.po), read with Babel the first time a text
is translated; a text missing from them falls back to English. `tests/test_language.py`
extracts the marked texts with Babel's own extractor (`tr`, `ntr`, `N_`, `markup`,
`markup_n`) and fails on a text with no translation or a translation with no text. A third
language is a new folder of catalogues and a new code in LANGUAGES.

    nbhelpers.set_language("ja")     # in a notebook, or
    NBHELPERS_LANG=ja jupyter lab    # for every kernel (`make lab-ja` does this)

A text with `{placeholders}` is formatted after translation, so a translation may put the
values in another order: tr("{n} heads", n=4) -> "4 個のヘッド". A text whose words follow a
count has plural forms, as gettext's ngettext: ntr("{n} head", "{n} heads", n).

Only nbhelpers' own words are translated. What a notebook passes (a title, a label, what a
check compared) is the notebook's, written in its edition's language, and shown as given.
"""

from __future__ import annotations

import functools
import os
from pathlib import Path

from .tables import width

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


def N_(text: str, /) -> str:
    """Marks a text for the catalogue where it is written and returns it unchanged: for a
    table of texts that is translated later, by `tr(name)` where it is shown."""
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


def pad(text, columns: int, align: str = "<") -> str:
    """`text` padded with spaces to `columns` columns ("<" left, ">" right), counting a
    Japanese character as two, so that a printed table lines up in any language."""
    text = str(text)
    fill = " " * max(columns - width(text), 0)
    return text + fill if align == "<" else fill + text


def listing(items, /) -> str:
    """Items as the course's language lists them: "a, b" in English, 「a、b」 in Japanese."""
    return tr(", ").join(map(str, items))
